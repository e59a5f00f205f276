module github.com/nsperf/nsperf

go 1.26.8

require (
	github.com/vishvananda/netns v0.0.5
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/vishvananda/netlink v1.3.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
