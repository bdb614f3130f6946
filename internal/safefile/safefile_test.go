package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCreateNewFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.pcap")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("abc"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "abc" {
		t.Fatalf("file holds %q, want abc", b)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm()&0o022 != 0 || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("new file mode %v", fi.Mode())
	}
}

// TestCreateRefuses: every refusal leaves the thing at the path exactly as
// it was and names the path and the fix.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "root-only")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "existing")
	os.WriteFile(existing, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.pcap")
	os.Symlink(victim, link)
	dangling := filepath.Join(dir, "dangling.pcap")
	os.Symlink(filepath.Join(dir, "created-through-link"), dangling)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "subdir")
	os.Mkdir(sub, 0o755)

	for _, tc := range []struct {
		name      string
		path      string
		overwrite bool
		is        error
		fix       string
	}{
		{"existing file", existing, false, ErrExists, "--force"},
		{"link to a file", link, false, ErrSymlink, "remove the link"},
		{"link to a file, overwrite", link, true, ErrSymlink, "remove the link"},
		{"dangling link", dangling, false, ErrSymlink, "remove the link"},
		{"dangling link, overwrite", dangling, true, ErrSymlink, "remove the link"},
		{"fifo, overwrite", fifo, true, ErrNotRegular, "regular file"},
		{"fifo", fifo, false, ErrExists, "--force"},
		{"directory, overwrite", sub, true, ErrNotRegular, "regular file"},
		{"missing directory", filepath.Join(dir, "nope", "x"), false, fs.ErrNotExist, "does not exist"},
		{"empty", "", false, nil, "give a file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Create(tc.path, Options{Overwrite: tc.overwrite, OverwriteHint: "--force"})
			if err == nil {
				f.Close()
				t.Fatalf("Create(%q) succeeded", tc.path)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.fix) {
				t.Errorf("error %q does not name %q and %q", err, tc.path, tc.fix)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("link target now holds %q", b)
	}
	if b, _ := os.ReadFile(existing); string(b) != "old" {
		t.Errorf("existing file now holds %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); err == nil {
		t.Errorf("a file was created through the dangling link")
	}
}

func TestCreateOverwrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out")
	os.WriteFile(p, []byte("a much longer old content"), 0o644)
	f, err := Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("overwritten file holds %q, want new", b)
	}
}
