module github.com/nsperf/nsperf

go 1.26.0

require (
	github.com/spf13/cobra v1.10.2
	github.com/vishvananda/netlink v1.3.1
	github.com/vishvananda/netns v0.0.5
	golang.org/x/sys v0.50.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/safchain/ethtool v0.7.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
