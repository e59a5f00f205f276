package patches

import (
	"github.com/nsperf/nsperf/kconfig"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// ovsMakefile is net/openvswitch/Makefile of 6.12, abridged: a composite module over
// continuation lines, a conditional part, and single-object modules beside it.
const ovsMakefile = `obj-$(CONFIG_OPENVSWITCH) += openvswitch.o

openvswitch-y := \
	actions.o \
	vport-internal_dev.o \
	vport-netdev.o

ifneq ($(CONFIG_NF_CONNTRACK),)
openvswitch-y += conntrack.o
endif

obj-$(CONFIG_OPENVSWITCH_VXLAN)+= vport-vxlan.o
`

// TestPlanBuild: a module's source or header is a modules-only build of its module; a
// built-in file, a Makefile, a Kconfig or a shared header is a whole kernel, with the reason;
// a file the config does not build is refused.
func TestPlanBuild(t *testing.T) {
	src := fstest.MapFS{
		"net/openvswitch/Makefile":   {Data: []byte(ovsMakefile)},
		"drivers/net/vxlan/Makefile": {Data: []byte("obj-$(CONFIG_VXLAN) += vxlan.o\n\nvxlan-objs := vxlan_core.o vxlan_multicast.o\n")},
		"net/core/Makefile":          {Data: []byte("obj-y := sock.o request_sock.o\nobj-y += dev.o dev_addr_lists.o # the core\n")},
		"net/sctp/Makefile":          {Data: []byte("obj-$(CONFIG_IP_SCTP) += sctp.o\nsctp-y := sm_statetable.o\n")},
	}
	config := kconfig.Parse(".config", []byte("CONFIG_OPENVSWITCH=m\nCONFIG_OPENVSWITCH_VXLAN=m\nCONFIG_VXLAN=m\n# CONFIG_IP_SCTP is not set\nCONFIG_LOCALVERSION=\"\"\n")).Values()
	ovs := Module{Dir: "net/openvswitch", Name: "openvswitch", Symbol: "OPENVSWITCH"}
	for _, tc := range []struct {
		touched []string
		modules []Module
		whole   string
	}{
		{[]string{"net/openvswitch/vport-internal_dev.c"}, []Module{ovs}, ""},
		{[]string{"net/openvswitch/conntrack.c", "net/openvswitch/actions.c"}, []Module{ovs}, ""},
		{[]string{"drivers/net/vxlan/vxlan_core.c"}, []Module{{Dir: "drivers/net/vxlan", Name: "vxlan", Symbol: "VXLAN"}}, ""},
		{[]string{"net/openvswitch/datapath.h"}, []Module{ovs, {Dir: "net/openvswitch", Name: "vport-vxlan", Symbol: "OPENVSWITCH_VXLAN"}}, ""},
		{[]string{"net/core/dev.c"}, nil, "net/core/dev.c: built in (obj-y)"},
		{[]string{"net/openvswitch/Makefile"}, nil, "a change to the build's own files"},
		{[]string{"net/openvswitch/Kconfig"}, nil, "a change to the build's own files"},
		{[]string{"include/linux/netdevice.h"}, nil, "a shared header?"},
		{[]string{"net/core/sock.h"}, nil, "built-in objects"},
		{[]string{"net/openvswitch/nothing.c"}, nil, "does not say which module builds nothing.o"},
		{[]string{"Documentation/x.rst", "net/openvswitch/actions.c"}, []Module{ovs}, ""},
	} {
		plan, err := PlanBuild(src, tc.touched, config)
		if err != nil {
			t.Fatalf("%v: %v", tc.touched, err)
		}
		if !reflect.DeepEqual(plan.Modules, tc.modules) || (tc.whole == "") != (len(plan.Whole) == 0) || (tc.whole != "" && !strings.Contains(plan.Whole[0], tc.whole)) {
			t.Errorf("%v: %+v, want modules %v and a whole kernel for %q", tc.touched, plan, tc.modules, tc.whole)
		}
	}
	if _, err := PlanBuild(src, []string{"net/sctp/sm_statetable.c"}, config); err == nil || !strings.Contains(err.Error(), "CONFIG_IP_SCTP is not set") {
		t.Errorf("a file the config does not build: %v", err)
	}
	// The module a file's functions are in, as the kernel names it.
	for file, want := range map[string]string{"net/openvswitch/vport-internal_dev.c": "openvswitch", "drivers/net/vxlan/vxlan_core.c": "vxlan",
		"net/core/dev.c": "", "net/sctp/sm_statetable.c": "", "net/nowhere/x.c": ""} {
		if got := ModuleOf(src, file, config); got != want {
			t.Errorf("ModuleOf(%s) = %q, want %q", file, got, want)
		}
	}
}
