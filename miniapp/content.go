package miniapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/query"
)

// editErr is a content_* domain error: mini-app-mcp answers it as a
// successful result {"error": kind, "data": {...}}.
type editErr struct {
	kind string
	data map[string]any
}

func (e *editErr) Error() string { return e.kind }

func editAnswer(err error) (string, error) {
	var ee *editErr
	switch x := err.(type) {
	case *editErr:
		ee = x
	case *Error:
		kind := "ERROR"
		if x.Code == "VALIDATION_ERROR" {
			kind = "VALIDATION"
		}
		if x.Code == "TABLE_NOT_FOUND" || x.Code == "TABLE_REQUIRED" {
			return "", x
		}
		ee = &editErr{kind: kind, data: map[string]any{"code": x.Code, "message": x.Text}}
	default:
		return "", err
	}
	return compact(map[string]any{"error": ee.kind, "data": ee.data})
}

type contentArgs struct {
	tableArgs
	ID         string   `json:"id"`
	Field      string   `json:"field"`
	ViewRange  []uint32 `json:"view_range"`
	OldStr     string   `json:"old_str"`
	NewStr     string   `json:"new_str"`
	ReplaceAll bool     `json:"replace_all"`
	Line       uint32   `json:"line"`
	Content    string   `json:"content"`
}

// loadText resolves the table, the row and the string field of a content
// tool. Table errors are returned as they are; the others as editErr.
func (s *Service) loadText(ctx context.Context, p *auth.Principal, args json.RawMessage, a *contentArgs) (*target, record, string, error) {
	t, err := s.resolveArg(ctx, p, args, a.tableArgs)
	if err != nil {
		return nil, record{}, "", err
	}
	f, ok := t.field(a.Field)
	if !ok {
		return nil, record{}, "", schemaErr(fmt.Sprintf("unknown field '%s' in table '%s'", a.Field, t.table))
	}
	if f.Type != "string" {
		return nil, record{}, "", &editErr{kind: "TYPE_ERROR", data: map[string]any{"code": "TYPE_ERROR", "field": a.Field, "actual_type": f.Type}}
	}
	id, err := s.resolveID(ctx, p, t, a.ID)
	if err != nil {
		return nil, record{}, "", err
	}
	r, err := s.getRow(ctx, p, t, id, a.ID)
	if err != nil {
		return nil, record{}, "", err
	}
	text, _ := r.Data[a.Field].(string)
	return t, r, text, nil
}

func (s *Service) contentView(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a contentArgs
	if err := decode(args, &a, "id", "field"); err != nil {
		return "", err
	}
	_, _, text, err := s.loadText(ctx, p, args, &a)
	if err != nil {
		return editAnswer(err)
	}
	lines := strings.Split(text, "\n")
	start, end := 1, len(lines)
	if len(a.ViewRange) == 2 {
		start = max(int(a.ViewRange[0]), 1)
		end = min(int(a.ViewRange[1]), len(lines))
	}
	var b strings.Builder
	for i := start; i <= end; i++ {
		fmt.Fprintf(&b, "%6d  %s\n", i, lines[i-1])
	}
	return compact(map[string]string{"content": b.String()})
}

func (s *Service) contentReplace(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a contentArgs
	if err := decode(args, &a, "id", "field", "old_str", "new_str"); err != nil {
		return "", err
	}
	if a.OldStr == "" {
		return editAnswer(validationErr("old_str", "must not be empty"))
	}
	if len(a.ViewRange) != 0 && (len(a.ViewRange) != 2 || a.ViewRange[0] == 0 || a.ViewRange[0] > a.ViewRange[1]) {
		return editAnswer(validationErr("view_range", "must be [start, end] with 1 <= start <= end"))
	}
	t, r, text, err := s.loadText(ctx, p, args, &a)
	if err != nil {
		return editAnswer(err)
	}
	lines := strings.Split(text, "\n")
	s0, e0 := 1, len(lines)
	if len(a.ViewRange) == 2 {
		s0, e0 = int(a.ViewRange[0]), min(int(a.ViewRange[1]), len(lines))
	}
	if s0 > len(lines) {
		return editAnswer(&editErr{kind: "STRING_NOT_FOUND", data: map[string]any{"code": "STRING_NOT_FOUND", "field": a.Field}})
	}
	before := strings.Join(lines[:s0-1], "\n")
	scope := strings.Join(lines[s0-1:e0], "\n")
	after := strings.Join(lines[e0:], "\n")
	n := strings.Count(scope, a.OldStr)
	switch {
	case n == 0:
		return editAnswer(&editErr{kind: "STRING_NOT_FOUND", data: map[string]any{"code": "STRING_NOT_FOUND", "field": a.Field}})
	case n > 1 && !a.ReplaceAll:
		return editAnswer(ambiguous(scope, s0, a.OldStr, n))
	}
	scope = strings.ReplaceAll(scope, a.OldStr, a.NewStr)
	parts := []string{}
	if s0 > 1 {
		parts = append(parts, before)
	}
	parts = append(parts, scope)
	if e0 < len(lines) {
		parts = append(parts, after)
	}
	if err := s.writeText(ctx, p, t, r, a.Field, strings.Join(parts, "\n")); err != nil {
		return editAnswer(err)
	}
	return compact(map[string]int{"matches": n})
}

// ambiguous lists up to 20 occurrences: line, column (byte offset + 1) and
// a snippet of up to 30 bytes either side, cut on character boundaries.
func ambiguous(scope string, firstLine int, old string, n int) *editErr {
	var cands []map[string]any
	off := 0
	for len(cands) < 20 {
		i := strings.Index(scope[off:], old)
		if i < 0 {
			break
		}
		pos := off + i
		line := firstLine + strings.Count(scope[:pos], "\n")
		col := pos - (strings.LastIndex(scope[:pos], "\n") + 1) + 1
		lo, hi := max(pos-30, 0), min(pos+len(old)+30, len(scope))
		for lo > 0 && !utf8.RuneStart(scope[lo]) {
			lo--
		}
		for hi < len(scope) && !utf8.RuneStart(scope[hi]) {
			hi++
		}
		cands = append(cands, map[string]any{"line": line, "col": col, "snippet": scope[lo:hi]})
		off = pos + len(old)
	}
	hint := "Pass view_range=[start,end] to scope, or replace_all=true to batch."
	if n > 20 {
		hint += fmt.Sprintf(" (showing first 20 of %d matches)", n)
	}
	return &editErr{kind: "AMBIGUOUS", data: map[string]any{"code": "AMBIGUOUS_MATCH", "matches": n, "candidates": cands, "hint": hint}}
}

func (s *Service) contentInsert(ctx context.Context, p *auth.Principal, args json.RawMessage) (string, error) {
	var a contentArgs
	if err := decode(args, &a, "id", "field", "line", "content"); err != nil {
		return "", err
	}
	t, r, text, err := s.loadText(ctx, p, args, &a)
	if err != nil {
		return editAnswer(err)
	}
	lines := strings.Split(text, "\n")
	if int(a.Line) > len(lines) {
		return editAnswer(&editErr{kind: "OUT_OF_RANGE", data: map[string]any{"code": "OUT_OF_RANGE", "line": a.Line, "total_lines": len(lines)}})
	}
	out := append([]string{}, lines[:a.Line]...)
	out = append(out, a.Content)
	out = append(out, lines[a.Line:]...)
	if err := s.writeText(ctx, p, t, r, a.Field, strings.Join(out, "\n")); err != nil {
		return editAnswer(err)
	}
	return compact(map[string]any{"line": a.Line, "inserted_lines": 1})
}

// writeText stores a field's new text as an update plan (history update),
// after full-row validation.
func (s *Service) writeText(ctx context.Context, p *auth.Principal, t *target, r record, field, text string) error {
	next := map[string]any{}
	for k, v := range r.Data {
		next[k] = v
	}
	next[field] = text
	if err := t.validate(next); err != nil {
		return err
	}
	plan := t.plan(p, query.Update)
	plan.Where = idIs(r.ID)
	plan.Set = []query.Assign{{Column: field, Value: text}}
	res, err := s.eng.Execute(ctx, p, plan)
	if err != nil {
		return asError(err, t.table)
	}
	if res.RowsAffected == 0 {
		return rowNotFound(r.ID)
	}
	r.Data = next
	return s.writeDump(t, r)
}
