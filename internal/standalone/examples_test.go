package standalone

import (
	"bytes"
	"context"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// example is one Example function of the repository.
type example struct {
	name string // pkg.ExampleFoo, as a reader finds it
	dir  string // directory of its program in the module
	ex   *doc.Example
}

// repoExamples parses every _test.go file of the repository and returns
// its Example functions, with the program go/doc makes of each (what
// pkg.go.dev's Run button runs): the function's body as main, the file's
// imports, and the file's declarations it uses. An Example without one
// (in an internal test package, or using a name the file does not declare)
// is returned with ex.Play nil.
func repoExamples(t *testing.T, root string) []example {
	t.Helper()
	var out []example
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if n := e.Name(); n == ".git" || n == "testdata" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, ex := range doc.Examples(f) {
			name := "Example" + ex.Name // ExampleOpen, Example_suffix
			out = append(out, example{name: rel + "." + name, dir: strings.ReplaceAll(rel, "/", "_") + "_" + name, ex: ex})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

var requireBlock = regexp.MustCompile(`(?s)\nrequire (\([^)]*\)|[^\n]*)`)

// TestExamplesStandAlone copies every Example, as go/doc's program of it,
// into a fresh module that requires gopmd (replaced by this checkout),
// builds them all, and runs those that state their output: an Example a
// reader copies must compile and behave on its own, without the names and
// imports of its package's other test files. The module is offline: the
// dependencies come from the module cache that built this test.
func TestExamplesStandAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every Example as a program of its own")
	}
	root := repoRoot(t)
	exs := repoExamples(t, root)
	if len(exs) < 10 {
		t.Fatalf("found %d Examples; the walk missed the repository", len(exs))
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	var m bytes.Buffer
	m.WriteString("module gopmd.example/examples\n\ngo " + goVersion(gomod) + "\n\nrequire github.com/gopmd/gopmd v0.0.0\n")
	for _, r := range requireBlock.FindAll(gomod, -1) {
		m.Write(r)
		m.WriteString("\n")
	}
	m.WriteString("\nreplace github.com/gopmd/gopmd => " + root + "\n")
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), m.Bytes())
	write(filepath.Join(mod, "go.sum"), gosum)
	var built []example
	for _, e := range exs {
		if e.ex.Play == nil {
			t.Errorf("%s is not a program of its own: it is in an internal test package, or uses names its file does not declare (go/doc makes no program of it)", e.name)
			continue
		}
		var b bytes.Buffer
		if err := format.Node(&b, token.NewFileSet(), e.ex.Play); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		write(filepath.Join(mod, e.dir, "main.go"), b.Bytes())
		built = append(built, e)
	}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./...")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off")
	if out, err := build.CombinedOutput(); err != nil {
		// Name each Example whose program failed.
		for _, e := range built {
			if bytes.Contains(out, []byte("./"+e.dir+"/")) || bytes.Contains(out, []byte(e.dir+"/main.go")) {
				t.Errorf("%s does not build on its own", e.name)
			}
		}
		t.Fatalf("go build of the Examples' programs: %v\n%s", err, out)
	}
	for _, e := range built {
		if e.ex.Output == "" && !e.ex.EmptyOutput {
			continue // no stated output: building is the check
		}
		run := exec.CommandContext(ctx, filepath.Join(bin, e.dir))
		run.Dir = mod
		var stdout, stderr bytes.Buffer
		run.Stdout, run.Stderr = &stdout, &stderr
		if err := run.Run(); err != nil {
			t.Errorf("%s, run on its own: %v\n%s", e.name, err, stderr.Bytes())
			continue
		}
		got, want := strings.TrimSpace(stdout.String()), strings.TrimSpace(e.ex.Output)
		if e.ex.Unordered {
			got, want = sortLines(got), sortLines(want)
		}
		if got != want {
			t.Errorf("%s, run on its own, printed\n%s\nwant\n%s\nstderr:\n%s", e.name, got, want, stderr.Bytes())
		}
	}
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// goVersion is the go directive of a go.mod.
func goVersion(gomod []byte) string {
	if m := regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(gomod); m != nil {
		return string(m[1])
	}
	return "1.22"
}

// TestRepoExamplesFindsPlayless: an Example in an internal test package,
// or one that uses a name of its package, gets no program, so the check
// above names it.
func TestRepoExamplesFindsPlayless(t *testing.T) {
	dir := t.TempDir()
	src := map[string]string{
		"a/x_test.go": "package a\n\nimport \"fmt\"\n\nfunc ExampleInternal() {\n\tfmt.Println(1)\n}\n",
		"b/y_test.go": "package b_test\n\nimport \"fmt\"\n\nfunc ExampleUnresolved() {\n\tfmt.Println(helper)\n}\n",
		"c/z_test.go": "package c_test\n\nimport \"fmt\"\n\nvar helper = 2\n\nfunc ExampleFine() {\n\tfmt.Println(helper)\n\t// Output: 2\n}\n",
	}
	for name, s := range src {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	play := map[string]bool{}
	for _, e := range repoExamples(t, dir) {
		play[e.name] = e.ex.Play != nil
	}
	want := map[string]bool{"a.ExampleInternal": false, "b.ExampleUnresolved": false, "c.ExampleFine": true}
	for n, w := range want {
		if got, ok := play[n]; !ok || got != w {
			t.Errorf("%s: program %v (found %v), want %v; all: %v", n, got, ok, w, play)
		}
	}
}
