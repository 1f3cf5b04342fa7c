package miniapp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Dumps: a table whose schema.yaml has a dump section gets, after every
// create, update, row_restore and content edit through these tools, the
// file <dump.dir>/<id>.md (or <cwd>/.mini-app/<table>/<id>.md without a
// dir) holding "# {title}\n\n{body}\n" (the body without its trailing
// newlines) from the fields the section names
// (title and body by default), as mini-app-mcp writes it. The row is
// already committed when the file is written: a failure answers
// `io error: …` and leaves the row as written. Deleting a row keeps its
// dump file. sync: bidirectional is written like write-only; edits to the
// files are not read back.

// dumpPath is where a row's dump file goes.
func dumpPath(t *target, id string) (string, error) {
	if d := t.info.Dump.Dir; d != nil && *d != "" {
		return filepath.Join(*d, id+".md"), nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(cwd, ".mini-app", t.info.Table, id+".md"), nil
}

// dumpText is the dump file of a row's data. As mini-app-mcp writes it,
// the body's trailing newlines are dropped, so the file always ends with
// exactly one.
func dumpText(t *target, data map[string]any) string {
	body := strings.TrimRight(dumpValue(data[t.info.Dump.BodyField]), "\n")
	return "# " + dumpValue(data[t.info.Dump.TitleField]) + "\n\n" + body + "\n"
}

// dumpDocOf is the dump section as info shows it: the keys schema.yaml
// sets, null for the others, as mini-app-mcp serializes its schema (the
// defaults title, body and write-only are applied, not shown). nil
// without a dump section.
func dumpDocOf(t *target) *dumpDoc {
	if t.info.Dump == nil {
		return nil
	}
	var y struct {
		Dump *struct {
			TitleField *string `yaml:"title_field"`
			BodyField  *string `yaml:"body_field"`
			Sync       *string `yaml:"sync"`
		} `yaml:"dump"`
	}
	_ = yaml.Unmarshal(t.info.YAML, &y) // the source parsed the same bytes
	d := &dumpDoc{Dir: t.info.Dump.Dir}
	if y.Dump != nil {
		d.TitleField, d.BodyField, d.Sync = y.Dump.TitleField, y.Dump.BodyField, y.Dump.Sync
	}
	return d
}

// dumpValue is a field as dump text: a string as it is, nothing for an
// absent or null field, any other value as its JSON.
func dumpValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// writeDump writes r's dump file when t has a dump section; the file is
// replaced atomically (a temporary file renamed over it).
func (s *Service) writeDump(t *target, r record) error {
	if t.info.Dump == nil {
		return nil
	}
	path, err := dumpPath(t, r.ID)
	if err != nil {
		return ioErr(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return ioErr(err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dump-*.md")
	if err != nil {
		return ioErr(err)
	}
	_, werr := tmp.WriteString(dumpText(t, r.Data))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return ioErr(werr)
	}
	return nil
}

// dumped writes r's dump file and answers r.
func (s *Service) dumped(t *target, r record) (string, error) {
	if err := s.writeDump(t, r); err != nil {
		return "", err
	}
	return compact(r)
}
