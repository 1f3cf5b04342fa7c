package miniapp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/query"
)

func init() {
	insertTools("alias_create",
		&Tool{Name: "row_materialize", Action: query.Read, Destructive: true, Idempotent: true,
			Description: "Write rows to files on the server: selector by_id {id} or by_filter {filter, limit (default 100), offset}; fields FieldSelector; format raw|markdown|json|yaml; dest (a directory of {id}.{ext} files, or one file with concat): on the gateway under your export directories <export root>/<org>/<project> (a relative dest is taken under the first), elsewhere PATH_NOT_ALLOWED; in the drop-in mode any absolute path; write_mode overwrite|error; dry_run. Returns {count, files:[{path, bytes, sha256, row_id}]}. Needs role admin.",
			InputSchema: obj(`"selector":{"type":"object","description":"{\"type\":\"by_id\",\"id\":…} or {\"type\":\"by_filter\",\"filter\":ListFilter,\"limit\":n,\"offset\":n}."},`+
				`"fields":{"type":"object","description":"FieldSelector: {\"mode\":\"all\"} or {\"mode\":\"list\",\"fields\":[…]}."},`+
				`"format":{"type":"string","enum":["raw","markdown","json","yaml"]},"dest":{"type":"string","description":"A directory, or the file when concat: on the gateway under <export root>/<org>/<project> (relative: under the first); in the drop-in mode an absolute path."},`+
				`"concat":{"type":"boolean"},"write_mode":{"type":"string","enum":["overwrite","error"]},"dry_run":{"type":"boolean"},`+tableProp,
				"selector", "fields", "format", "dest"),
			run: (*Service).materialize})
}

// requireAdmin refuses a caller without the admin role, naming its roles
// as the pipeline's refusals do.
func requireAdmin(p *auth.Principal, tool string) error {
	return permissions.RequireAdmin(p.Roles, tool+" writes files on the server and")
}

func matErr(kind fault.Kind, code string, data map[string]any, format string, args ...any) *Error {
	return newErr(kind, code, data, format, args...)
}

func matInvalidParam(field, reason string) *Error {
	return matErr(fault.Invalid, "MATERIALIZE_INVALID_PARAM", map[string]any{"field": field, "reason": reason},
		"materialize invalid param '%s': %s", field, reason)
}

func matDestInvalid(path, reason string) *Error {
	return matErr(fault.Conflict, "MATERIALIZE_DEST_INVALID", map[string]any{"path": path, "reason": reason},
		"materialize dest invalid '%s': %s", path, reason)
}

func matIO(msg string) *Error {
	return matErr(fault.Unavailable, "MATERIALIZE_IO_ERROR", nil, "materialize io error: %s", msg)
}

func matFormat(msg string) *Error {
	return matErr(fault.Internal, "MATERIALIZE_FORMAT_ERROR", nil, "materialize format error: %s", msg)
}

// rowSelector is by_id {id} or by_filter {filter, limit, offset}.
type rowSelector struct {
	Type   string          `json:"type"`
	ID     *string         `json:"id"`
	Filter json.RawMessage `json:"filter"`
	Limit  *uint32         `json:"limit"`
	Offset *uint32         `json:"offset"`
}

// matFile is one output file of row_materialize.
type matFile struct {
	Path   string  `json:"path"`
	Bytes  int     `json:"bytes"`
	SHA256 string  `json:"sha256"`
	RowID  *string `json:"row_id"`
	data   []byte
	name   string // in the destination directory
}

// projField is one projected key and value, in projection order.
type projField struct {
	name  string
	value any
}

var extOf = map[string]string{"raw": "txt", "markdown": "md", "json": "json", "yaml": "yaml"}

func (s *Service) materialize(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a struct {
		tableArgs
		Selector  rowSelector     `json:"selector"`
		Fields    json.RawMessage `json:"fields"`
		Format    string          `json:"format"`
		Dest      string          `json:"dest"`
		Concat    bool            `json:"concat"`
		WriteMode string          `json:"write_mode"`
		DryRun    bool            `json:"dry_run"`
	}
	if err := decode(args, &a, "selector", "fields", "format", "dest"); err != nil {
		return "", err
	}
	if a.Selector.Type != "by_id" && a.Selector.Type != "by_filter" {
		return "", &ArgsError{Msg: fmt.Sprintf("invalid params: selector: unknown variant `%s`, expected `by_id` or `by_filter`", a.Selector.Type)}
	}
	if a.Selector.Type == "by_id" && a.Selector.ID == nil {
		return "", &ArgsError{Msg: "invalid params: selector: missing field `id`"}
	}
	if a.Selector.Type == "by_filter" && (len(a.Selector.Filter) == 0 || string(a.Selector.Filter) == "null") {
		return "", &ArgsError{Msg: "invalid params: selector: missing field `filter`"}
	}
	ext, ok := extOf[a.Format]
	if !ok {
		return "", &ArgsError{Msg: fmt.Sprintf("invalid params: format: unknown variant `%s`, expected one of `raw`, `markdown`, `json`, `yaml`", a.Format)}
	}
	if a.WriteMode != "" && a.WriteMode != "overwrite" && a.WriteMode != "error" {
		return "", &ArgsError{Msg: fmt.Sprintf("invalid params: write_mode: unknown variant `%s`, expected `overwrite` or `error`", a.WriteMode)}
	}
	var sel fieldSelector
	if err := json.Unmarshal(a.Fields, &sel); err != nil {
		return "", argsProblem("fields", err)
	}
	all := sel.Mode == "all" || strings.EqualFold(sel.Type, "all")
	if !all && sel.Mode != "list" && !strings.EqualFold(sel.Type, "list") {
		return "", &ArgsError{Msg: "invalid params: fields: mode must be `all` or `list`"}
	}
	if s.cfg.Mounted && !filepath.IsAbs(a.Dest) {
		return "", matErr(fault.Invalid, "MATERIALIZE_DEST_RELATIVE", map[string]any{"path": a.Dest}, "materialize dest must be absolute: %s", a.Dest)
	}
	if err := requireAdmin(p, "row_materialize"); err != nil {
		return "", err
	}
	// Where the files go, checked before any row is read: on the gateway,
	// under the caller's export directories only.
	dir, concatName := a.Dest, ""
	if a.Concat {
		dir, concatName = filepath.Dir(a.Dest), filepath.Base(a.Dest)
	}
	out, err := s.outDir(p, dir, false)
	if err != nil {
		return "", matDirErr(dir, err)
	}
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return "", err
	}
	var names []string
	if all {
		for _, f := range t.fields() {
			names = append(names, f.Name)
		}
	} else {
		for _, f := range sel.Fields {
			if _, ok := t.field(f); !ok {
				return "", matErr(fault.Invalid, "MATERIALIZE_FIELD_UNKNOWN", map[string]any{"field": f}, "materialize unknown field: %s", f)
			}
		}
		names = sel.Fields
	}
	if a.Selector.Type == "by_id" && a.Concat {
		return "", matInvalidParam("concat", "concat=true requires selector=by_filter (ById always yields a single row)")
	}

	// The rows, through the pipeline: row scopes and column limits apply.
	plan := t.plan(p, query.Read)
	if a.Selector.Type == "by_id" {
		plan.Where = idIs(*a.Selector.ID)
	} else {
		if plan.Where, err = t.toExpr(a.Selector.Filter); err != nil {
			return "", err
		}
		plan.Order = []query.Order{{Column: "created_at", Desc: true}}
		plan.Limit = 100
		if a.Selector.Limit != nil {
			plan.Limit = min(int64(*a.Selector.Limit), 1000)
		}
		if a.Selector.Offset != nil {
			plan.Offset = int64(*a.Selector.Offset)
		}
	}
	var rows []record
	if plan.Limit == 0 && a.Selector.Type == "by_filter" {
		rows = []record{} // limit 0 reads nothing
	} else if rows, err = s.read(ctx, p, plan); err != nil {
		return "", err
	}
	if len(rows) == 0 {
		if a.Selector.Type == "by_id" {
			return "", matErr(fault.NotFound, "MATERIALIZE_ROW_NOT_FOUND", map[string]any{"id": *a.Selector.ID}, "materialize row not found: %s", *a.Selector.ID)
		}
		return "", matErr(fault.NotFound, "MATERIALIZE_EMPTY_RESULT", nil, "materialize filter matched zero rows")
	}
	projected := make([][]projField, len(rows))
	for i, r := range rows {
		for _, n := range names {
			projected[i] = append(projected[i], projField{n, r.Data[n]})
		}
		projected[i] = sortedFields(projected[i])
	}

	var files []matFile
	if a.Concat {
		b, err := renderRows(a.Format, projected, rows)
		if err != nil {
			return "", err
		}
		files = append(files, newMatFile(concatName, b, nil))
	} else {
		for i, r := range rows {
			b, err := renderRow(a.Format, projected[i], r.ID)
			if err != nil {
				return "", err
			}
			id := r.ID
			files = append(files, newMatFile(r.ID+"."+ext, b, &id))
		}
	}
	place := func(dir string) error {
		for i := range files {
			path, err := s.outFile(p, dir, files[i].name)
			if err != nil {
				return err
			}
			files[i].Path = path
		}
		if a.Concat && s.cfg.Mounted {
			files[0].Path = a.Dest // as given
		}
		return nil
	}
	if err := place(out); err != nil {
		return "", err
	}
	errorMode := a.WriteMode == "error"
	if errorMode {
		// Checked for every file before any is written, in dry_run too.
		for _, f := range files {
			if _, err := os.Lstat(f.Path); err == nil {
				return "", matDestInvalid(f.Path, "file already exists with write_mode=error")
			}
		}
	}
	if !a.DryRun {
		// The directories are made now, resolved again: the files go where
		// the resolved path leads at this moment.
		if out, err = s.outDir(p, dir, true); err != nil {
			return "", matDirErr(dir, err)
		}
		if err := place(out); err != nil {
			return "", err
		}
		for _, f := range files {
			if err := writeAtomic(f.Path, f.data, errorMode, s.filePerm()); err != nil {
				return "", err
			}
		}
	}
	return compact(map[string]any{"count": len(files), "files": files})
}

// newMatFile is the file name in the destination directory, with its
// bytes; Path is set by where the directory resolves.
func newMatFile(name string, b []byte, rowID *string) matFile {
	sum := sha256.Sum256(b)
	return matFile{Bytes: len(b), SHA256: hex.EncodeToString(sum[:]), RowID: rowID, data: b, name: name}
}

// matDirErr words a failure of outDir: PATH_NOT_ALLOWED as it is, an OS
// error as mini-app-mcp's create_dir_all failure.
func matDirErr(dir string, err error) error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return matIO(fmt.Sprintf("create_dir_all '%s': %s", dir, errMsg(err)))
}

// errMsg is the OS error without Go's "op path:" wrapper.
func errMsg(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeAtomic writes b to path (mode perm) through a temporary file of the
// same directory, created new (O_EXCL), and a rename; with noReplace an
// existing path is refused (a hard link does not replace what is there).
// Neither the rename nor the link follows a symbolic link at path.
func writeAtomic(path string, b []byte, noReplace bool, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	name := tmp.Name()
	defer os.Remove(name)
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	if err := tmp.Close(); err != nil {
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	if noReplace {
		if err := os.Link(name, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return matDestInvalid(path, "file already exists with write_mode=error")
			}
			return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
		}
		return nil
	}
	if err := os.Rename(name, path); err != nil {
		return matIO(fmt.Sprintf("write '%s': %s", path, errMsg(err)))
	}
	return nil
}

// cellText is a value as raw and markdown write it: a string as is, anything
// else as compact JSON.
func cellText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := jsonBytes(v, "", "")
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// jsonBytes encodes v without HTML escaping, indented when indent is set.
func jsonBytes(v any, prefix, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent(prefix, indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, matFormat("json: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// prettyObject writes the fields as a pretty JSON object in their order
// (serde_json's to_string_pretty layout), indented by prefix.
func prettyObject(buf *bytes.Buffer, fields []projField, prefix string) error {
	if len(fields) == 0 {
		buf.WriteString("{}")
		return nil
	}
	buf.WriteString("{\n")
	for i, f := range fields {
		k, err := jsonBytes(f.name, "", "")
		if err != nil {
			return err
		}
		v, err := jsonBytes(f.value, prefix+"  ", "  ")
		if err != nil {
			return err
		}
		buf.WriteString(prefix + "  ")
		buf.Write(k)
		buf.WriteString(": ")
		buf.Write(v)
		if i < len(fields)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString(prefix + "}")
	return nil
}

// yamlDoc encodes the fields as one YAML document, the bytes mini-app-mcp's
// serde_yaml_bw writes for the same map (see yamlout.go).
func yamlDoc(fields []projField) ([]byte, error) {
	m := make(orderedMap, len(fields))
	for i, f := range fields {
		m[i] = yamlPair{f.name, f.value}
	}
	b, err := upstreamYAML(m)
	if err != nil {
		return nil, matFormat("yaml: " + err.Error())
	}
	return b, nil
}

// sortedFields is a row's projection as mini-app-mcp holds it: a
// serde_json map, so each name once and the names in byte order, whatever
// the schema's or the field list's order.
func sortedFields(fields []projField) []projField {
	seen := map[string]bool{}
	out := make([]projField, 0, len(fields))
	for _, f := range fields {
		if !seen[f.name] {
			seen[f.name] = true
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// renderRow serializes one projected row.
func renderRow(format string, fields []projField, id string) ([]byte, error) {
	switch format {
	case "raw":
		lines := make([]string, len(fields))
		for i, f := range fields {
			s, err := cellText(f.value)
			if err != nil {
				return nil, err
			}
			lines[i] = s
		}
		return []byte(strings.Join(lines, "\n")), nil
	case "markdown":
		var sb strings.Builder
		sb.WriteString("# " + id + "\n")
		for _, f := range fields {
			s, err := cellText(f.value)
			if err != nil {
				return nil, err
			}
			sb.WriteString("\n## " + f.name + "\n\n" + s + "\n")
		}
		return []byte(sb.String()), nil
	case "json":
		var buf bytes.Buffer
		if err := prettyObject(&buf, fields, ""); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return yamlDoc(fields)
}

// renderRows serializes the rows as one file: raw joined by a blank line,
// markdown by "\n---\n\n", json as a pretty array, yaml as a document
// stream with each document prefixed by "---\n".
func renderRows(format string, projected [][]projField, rows []record) ([]byte, error) {
	switch format {
	case "raw", "markdown":
		sep := "\n\n"
		if format == "markdown" {
			sep = "\n---\n\n"
		}
		parts := make([]string, len(rows))
		for i, r := range rows {
			b, err := renderRow(format, projected[i], r.ID)
			if err != nil {
				return nil, err
			}
			parts[i] = string(b)
		}
		return []byte(strings.Join(parts, sep)), nil
	case "json":
		var buf bytes.Buffer
		buf.WriteString("[\n")
		for i, fields := range projected {
			buf.WriteString("  ")
			if err := prettyObject(&buf, fields, "  "); err != nil {
				return nil, err
			}
			if i < len(projected)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString("]")
		return buf.Bytes(), nil
	}
	var out []byte
	for _, fields := range projected {
		b, err := yamlDoc(fields)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out, nil
}
