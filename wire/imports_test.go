package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFacesImportNotEachOther holds the import rule of the design: the
// faces share wire, and api and mcp never import each other (directly or
// through another package); wire imports neither.
func TestFacesImportNotEachOther(t *testing.T) {
	const mod = "github.com/littlebitlabs/minimal/"
	for pkg, banned := range map[string][]string{
		"api":  {"mcp"},
		"mcp":  {"api"},
		"wire": {"api", "mcp"},
	} {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == mod+b || strings.HasPrefix(dep, mod+b+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
