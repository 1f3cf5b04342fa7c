package policy

import (
	"os"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

// TestValidateSchemaAction: templates may grant the schema action (the
// mini-app schema_* tools); unknown actions still name the accepted ones.
func TestValidateSchemaAction(t *testing.T) {
	base, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	f, err := loadString(t, strings.Replace(string(base), "actions: [read]}", "actions: [read, schema]}", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("schema refused: %v", err)
	}
	f, err = loadString(t, strings.Replace(string(base), "actions: [read]}", "actions: [read, schema, schema]}", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); fault.KindOf(err) != fault.Invalid || !strings.Contains(fault.As(err).Message, `action "schema" is listed twice`) {
		t.Fatalf("repeated schema: %v", err)
	}
	f, err = loadString(t, strings.Replace(string(base), "actions: [read]}", "actions: [drop]}", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); !strings.Contains(fault.As(err).Message, `action "drop" is not one of create, read, update, delete, schema`) {
		t.Fatalf("unknown action: %v", err)
	}
}
