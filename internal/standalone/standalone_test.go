package standalone

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The forbidden strings are assembled so that this file does not contain
// them literally and the scan does not have to skip itself.
var forbidden = []string{
	"hw/" + "enetc.md",
	"hw/" + "fec.md",
	"/" + "work/",
	"shared" + "/",
	"anchors" + ".md", // working notes kept beside the repository
}

// outsideWords are phrases that point at something outside the repository
// (a planning thread, a brief, a numbered request, notes, a round of work)
// instead of saying what a figure or rule is and where it is published.
// Each is assembled so that this file does not match it.
var outsideWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bthe ` + `seed\b`),
	regexp.MustCompile(`(?i)\bthe ` + `issue\b`),
	regexp.MustCompile(`(?i)\bissue ` + `\d+(\.\d+)*\b`),
	regexp.MustCompile(`(?i)\bresearch ` + `notes?\b`),
	regexp.MustCompile(`(?i)\bround ` + `\d`),
	regexp.MustCompile(`(?i)\bdesign ` + `brief\b`),
}

// hwDocs are the hardware references whose sections code may cite.
var hwDocs = []string{"docs/hardware-enetc.md", "docs/hardware-fec.md"}

// bareRef maps a directory to the hardware reference its package documents
// as the meaning of a bare section mark (§N) in its .go files. A
// subdirectory inherits it (enetc/model from enetc).
var bareRef = map[string]string{
	"enetc": "docs/hardware-enetc.md",
	"fec":   "docs/hardware-fec.md",
}

// selfDoc returns the reference bare section marks in file rel refer to,
// or "" if the file has none.
func selfDoc(rel string) string {
	for _, d := range hwDocs {
		if rel == d {
			return d
		}
	}
	if strings.HasSuffix(rel, ".go") {
		if d := bareRef[strings.SplitN(rel, "/", 2)[0]]; d != "" {
			return d
		}
	}
	return ""
}

// cite matches a citation of a hardware reference followed by one or more
// section marks, possibly across a comment line break ("... fec.md\n// §6")
// and in lists ("§1 and §6", "§2, §2.12").
var cite = regexp.MustCompile(`docs/hardware-(enetc|fec)\.md((?:[\s/*#,()]*(?:and\s+)?§\d+(?:\.\d+)*)+)`)

var secMark = regexp.MustCompile(`§(\d+(?:\.\d+)*)`)

// heading matches a numbered Markdown heading: "## 2. Register map",
// "### 2.5 RCR (0x084)".
var heading = regexp.MustCompile(`(?m)^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s`)

// sections returns the section numbers a Markdown document defines.
func sections(md string) map[string]bool {
	s := make(map[string]bool)
	for _, m := range heading.FindAllStringSubmatch(md, -1) {
		s[m[1]] = true
	}
	return s
}

// problems returns what is wrong with one file's text: forbidden strings
// and citations of hardware-reference sections that secs does not define.
// self is the hardware reference a bare "§N" in the file refers to ("" if
// none): the reference itself, or the one a package's doc names.
func problems(text, self string, secs map[string]map[string]bool) []string {
	var out []string
	for _, f := range forbidden {
		if i := strings.Index(text, f); i >= 0 {
			out = append(out, "line "+lineOf(text, i)+": cites "+f+", which is not part of the repository")
		}
	}
	for _, w := range outsideWords {
		for _, m := range w.FindAllStringIndex(text, -1) {
			out = append(out, "line "+lineOf(text, m[0])+": says \""+text[m[0]:m[1]]+"\", which points outside the repository; say what it is and its public source")
		}
	}
	for _, m := range cite.FindAllStringSubmatchIndex(text, -1) {
		doc := "docs/hardware-" + text[m[2]:m[3]] + ".md"
		for _, s := range secMark.FindAllStringSubmatch(text[m[4]:m[5]], -1) {
			if !secs[doc][s[1]] {
				out = append(out, "line "+lineOf(text, m[0])+": cites "+doc+" §"+s[1]+", which has no such heading")
			}
		}
	}
	if self != "" {
		// Marks that belong to an explicit citation were checked above;
		// blank them (keeping line numbers) so only bare marks remain.
		text = cite.ReplaceAllStringFunc(text, func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == '\n' {
					return r
				}
				return ' '
			}, s)
		})
		for _, m := range secMark.FindAllStringSubmatchIndex(text, -1) {
			if n := text[m[2]:m[3]]; !secs[self][n] {
				out = append(out, "line "+lineOf(text, m[0])+": refers to §"+n+", which "+self+" has no heading for")
			}
		}
	}
	return out
}

func lineOf(text string, off int) string {
	return strconv.Itoa(strings.Count(text[:off], "\n") + 1)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: no go.mod: %v", root, err)
	}
	return root
}

// TestRepositoryStandsAlone scans every text file of the repository: Go and
// Markdown, scripts, CI configuration, test data.
func TestRepositoryStandsAlone(t *testing.T) {
	root := repoRoot(t)
	secs := make(map[string]map[string]bool)
	for _, d := range hwDocs {
		b, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatalf("hardware reference %s: %v", d, err)
		}
		secs[d] = sections(string(b))
		if len(secs[d]) < 10 {
			t.Fatalf("hardware reference %s has %d numbered headings; the section check would prove nothing", d, len(secs[d]))
		}
	}
	var scanned, cites int
	var bad []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || e.Name() == ".git" { // a worktree's .git file names its checkout
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil // binary (pcap, fixtures): no citations
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		self := selfDoc(rel)
		scanned++
		cites += len(cite.FindAllStringIndex(string(b), -1))
		for _, p := range problems(string(b), self, secs) {
			bad = append(bad, rel+": "+p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 || cites < 10 {
		t.Fatalf("scanned %d files with %d section citations: the walk missed the repository", scanned, cites)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestProblemsCatches proves the checker reports each kind of fault.
func TestProblemsCatches(t *testing.T) {
	h := "docs/hardware-" // assembled so the repository scan does not read these cases as citations
	secs := map[string]map[string]bool{
		h + "fec.md":   sections("## 1. Instances\n### 2.5 RCR (0x084)\n## 6. Quirks\n"),
		h + "enetc.md": sections("## 9. Bring-up\n"),
	}
	for _, c := range []struct {
		text, self string
		want       int
	}{
		{"// RCR.LOOP (" + h + "fec.md §2.5)\n", "", 0},
		{"// quirks (" + h + "fec.md §1 and §6)\n", "", 0},
		{"// see (" + h + "fec.md\n// §6, §2.5)\n", "", 0},
		{"// see " + h + "fec.md §2.6\n", "", 1},
		{"// see " + h + "fec.md\n// §1 and §7\n", "", 1},
		{"// as " + h + "enetc.md §9 says\n", "", 0},
		{"// as " + h + "enetc.md §9.1 says\n", "", 1},
		{"// as " + forbidden[0] + " §9 says\n", "", 1},
		{"// from " + forbidden[1] + "\n", "", 1},
		{"// notes in " + forbidden[2] + "x\n", "", 1},
		{"// notes in ../" + forbidden[3] + "hw\n", "", 1},
		{"see §2.5 and §6\n", h + "fec.md", 0},
		{"see §2.4\n", h + "fec.md", 1},
		{"see §2.4\n", "", 0},
		{"// RCR (§2.5); quirks (" + h + "enetc.md §9)\n", h + "fec.md", 0},
		{"// RCR (§2.5); quirks (" + h + "enetc.md §6)\n", h + "fec.md", 1},
		{"// as The " + "seed's figure says\n", "", 1},
		{"// (what the " + "issue asks for)\n", "", 1},
		{"not replayed (issue " + "11.5)\n", "", 1},
		{"Anchors (research " + "notes)\n", "", 1},
		{"| first | round " + "1 | Round " + "2 |\n", "", 2},
		{"the project's DESIGN " + "brief\n", "", 1},
		{"rounds of 128 times; the fastest round is steadier\n", "", 0},
		{"an issue with 3 rings; the seeds of the generator\n", "", 0},
	} {
		if got := problems(c.text, c.self, secs); len(got) != c.want {
			t.Errorf("problems(%q, %q) = %q, want %d problem(s)", c.text, c.self, got, c.want)
		}
	}
	for rel, want := range map[string]string{
		"enetc/regs.go":            h + "enetc.md",
		"enetc/model/regs.go":      h + "enetc.md",
		"fec/model/rx.go":          h + "fec.md",
		h + "fec.md":               h + "fec.md",
		"enetc/README.md":          "",
		"pci/internal/vfio/abi.go": "",
		"fecx/a.go":                "",
	} {
		if got := selfDoc(rel); got != want {
			t.Errorf("selfDoc(%q) = %q, want %q", rel, got, want)
		}
	}
}
