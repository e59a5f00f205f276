package coverage

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/patches"
)

// SourceRoots are the folders of a kernel tree whose functions a coverage map records: the
// network stack and the virtual devices nsperf builds. Hardware drivers (a NIC's, a USB
// device's) never run in a guest: their folders are left out.
var SourceRoots = []string{"net", "drivers/net"}

// hardwareDirs are drivers/net's folders of drivers for devices a guest does not have.
var hardwareDirs = []string{"ethernet", "wireless", "usb", "can", "wwan", "phy", "pcs", "dsa", "ipa", "fddi", "hamradio", "wan",
	"arcnet", "ieee802154", "mdio", "pse-pd", "plip", "slip", "fjes", "hippi", "mctp", "thunderbolt"}

// UnderRoots reports whether a source file is where IndexSource reads (and so where a trace
// can see its functions run): under SourceRoots, not in a hardware driver's folder.
func UnderRoots(file string) bool {
	for _, root := range SourceRoots {
		if strings.HasPrefix(file, root+"/") {
			rest := strings.TrimPrefix(file, root+"/")
			dir, _, nested := strings.Cut(rest, "/")
			return !(root == "drivers/net" && nested && slices.Contains(hardwareDirs, dir))
		}
	}
	return false
}

// maxSourceFile bounds one file read: the largest .c file of net/ is a few hundred KiB.
const maxSourceFile = 8 << 20

// IndexSource maps each function defined in the .c files under SourceRoots of a kernel tree
// to the files that define it (a static function's name may be another file's too).
func IndexSource(tree fs.FS) (map[string][]string, error) {
	index := map[string][]string{}
	for _, root := range SourceRoots {
		err := fs.WalkDir(tree, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path.Dir(p) == "drivers/net" && slices.Contains(hardwareDirs, d.Name()) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(p, ".c") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() > maxSourceFile {
				return fmt.Errorf("%s: %d bytes, not a source file", p, info.Size())
			}
			data, err := fs.ReadFile(tree, p)
			if err != nil {
				return err
			}
			for _, name := range patches.Definitions(string(data)) {
				if !slices.Contains(index[name], p) {
					index[name] = append(index[name], p)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("indexing the kernel source: %w", err)
		}
	}
	return index, nil
}
