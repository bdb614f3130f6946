package simphy

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestModelsDoNotImportMII: the device models' PHYs (vendor registers
// included) are this transcription, not the drivers' internal/mii, so
// that internal/mii's cross-check compares two transcriptions and not one
// with itself.
func TestModelsDoNotImportMII(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range []string{"enetc/model", "fec/model"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, im := range f.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/gopmd/gopmd/internal/mii" {
					t.Errorf("%s imports %s: a model's PHY is sim/simphy's transcription", path, p)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d model files: is the tree where the test expects it?", checked)
	}
}
