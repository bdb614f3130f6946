// Package version tells which build of gopmd a command is, from the build
// information the Go toolchain stamps into every binary: the module's
// version (a tag when built with go install module@version, "(devel)" from
// a checkout), and, for a build from a checkout, the commit, its time and
// whether the tree had uncommitted changes.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// String is the text of a command's --version: its name, the module and
// version, the VCS state when known, and the Go toolchain and target.
func String(command string) string {
	bi, _ := debug.ReadBuildInfo()
	return format(command, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// format is String with its inputs given; bi may be nil (a binary built
// without module support).
func format(command string, bi *debug.BuildInfo, goVersion, target string) string {
	var b strings.Builder
	mod, ver := "github.com/gopmd/gopmd", "unknown"
	if bi != nil && bi.Main.Path != "" {
		mod = bi.Main.Path
		if bi.Main.Version != "" {
			ver = bi.Main.Version
		}
	}
	fmt.Fprintf(&b, "%s %s %s\n", command, mod, ver)
	var rev, when, modified, vcs string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs":
				vcs = s.Value
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if rev != "" {
		if vcs == "" {
			vcs = "vcs"
		}
		fmt.Fprintf(&b, "%s revision %s", vcs, rev)
		if when != "" {
			fmt.Fprintf(&b, " (%s)", when)
		}
		if modified == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "built with %s for %s\n", goVersion, target)
	return b.String()
}
