package custom

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
	"github.com/littlebitlabs/minimal/store"
)

func ptr[T any](v T) *T { return &v }

// readDef is a valid read definition; tests change one thing at a time.
func readDef() store.CustomAPI {
	return store.CustomAPI{
		URI: "employees/by-department", Method: "GET", Version: 1, Type: "pg", Schema: "public", Mode: store.ModeRead,
		Roles: []string{"hr"}, Tables: []string{"employees"},
		Params: []store.CustomParam{
			{Name: "dept", Type: "integer", Required: true, Min: ptr(1.0)},
			{Name: "name", Type: "string", Default: ptr("%"), MaxLength: ptr(20)},
		},
		Statements: []string{"SELECT id, full_name FROM employees WHERE department_id = :dept AND full_name LIKE :name ORDER BY id"},
	}
}

func writeDef() store.CustomAPI {
	return store.CustomAPI{
		URI: "employees/transfer", Method: "POST", Version: 2, Type: "pg", Schema: "public", Mode: store.ModeWrite,
		Roles: []string{"hr"}, Tables: []string{"departments"},
		Params: []store.CustomParam{{Name: "id", Type: "integer", Required: true}, {Name: "dept", Type: "integer", Required: true}},
		Statements: []string{
			"UPDATE employees SET department_id = :dept WHERE id = :id AND :dept IN (SELECT id FROM departments)",
			`INSERT INTO public."Audit" (msg) VALUES ('moved ' || :id)`,
			"delete from only log where id = :id;",
		},
	}
}

func TestCompileAccepts(t *testing.T) {
	a, err := Compile(readDef())
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Actions(); !slices.Equal(got, []query.Action{query.Read}) {
		t.Fatalf("read actions %v", got)
	}
	if got := a.Access(); !slices.Equal(got, []Access{{"employees", query.Read}}) {
		t.Fatalf("read access %v", got)
	}
	w, err := Compile(writeDef())
	if err != nil {
		t.Fatal(err)
	}
	want := []Access{{"employees", query.Update}, {"Audit", query.Insert}, {"log", query.Delete}, {"departments", query.Read}}
	if got := w.Access(); !slices.Equal(got, want) {
		t.Fatalf("write access %v, want %v", got, want)
	}
	if got := w.Actions(); !slices.Equal(got, []query.Action{query.Insert, query.Read, query.Update, query.Delete}) {
		t.Fatalf("write actions %v", got)
	}
	// A read listing no table still needs read.
	d := readDef()
	d.Tables = nil
	d.Statements = []string{"SELECT now() WHERE :dept > 0 AND :name <> ''"}
	if a, err := Compile(d); err != nil || !slices.Equal(a.Actions(), []query.Action{query.Read}) || len(a.Access()) != 0 {
		t.Fatalf("no-table read: %v %v", a, err)
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(d *store.CustomAPI)
		mention string
	}{
		{"bad uri", func(d *store.CustomAPI) { d.URI = "/Employees" }, "uri"},
		{"uri double slash", func(d *store.CustomAPI) { d.URI = "a//b" }, "empty segment"},
		{"method", func(d *store.CustomAPI) { d.Method = "PATCH" }, "method"},
		{"version", func(d *store.CustomAPI) { d.Version = 0 }, "version 0"},
		{"mode", func(d *store.CustomAPI) { d.Mode = "both" }, "mode"},
		{"no roles", func(d *store.CustomAPI) { d.Roles = nil }, "roles is empty"},
		{"role twice", func(d *store.CustomAPI) { d.Roles = []string{"a", "a"} }, `role "a" is listed twice`},
		{"no statement", func(d *store.CustomAPI) { d.Statements = nil }, "no statement"},
		{"type", func(d *store.CustomAPI) { d.Params[0].Type = "int" }, `type "int"`},
		{"param name", func(d *store.CustomAPI) { d.Params[0].Name = "1x" }, "parameter name"},
		{"reserved name", func(d *store.CustomAPI) {
			d.Params[0].Name = "version"
			d.Statements = []string{"SELECT :version, :name"}
		}, "reserved"},
		{"param twice", func(d *store.CustomAPI) { d.Params[1].Name = "dept" }, `parameter "dept" is listed twice`},
		{"required with default", func(d *store.CustomAPI) { d.Params[0].Default = ptr("3") }, "required and has a default"},
		{"bad default", func(d *store.CustomAPI) { d.Params[0].Required, d.Params[0].Default = false, ptr("x") }, `default of parameter "dept" must be an integer`},
		{"default out of bounds", func(d *store.CustomAPI) { d.Params[0].Required, d.Params[0].Default = false, ptr("0") }, "at least 1"},
		{"max_length on integer", func(d *store.CustomAPI) { d.Params[0].MaxLength = ptr(3) }, "max_length applies to a string"},
		{"min on string", func(d *store.CustomAPI) { d.Params[1].Min = ptr(1.0) }, "min applies to an integer or a number"},
		{"fractional bound", func(d *store.CustomAPI) { d.Params[0].Min = ptr(1.5) }, "not a usable bound"},
		{"min over max", func(d *store.CustomAPI) { d.Params[0].Max = ptr(0.0) }, "greater than max"},
		{"undeclared", func(d *store.CustomAPI) { d.Statements = []string{"SELECT :dept, :name, :nope"} }, ":nope is not a declared parameter"},
		{"unused", func(d *store.CustomAPI) { d.Statements = []string{"SELECT :dept"} }, `"name" is declared but no statement uses`},
		{"param in string", func(d *store.CustomAPI) {
			d.Statements = []string{"SELECT * FROM employees WHERE full_name LIKE '%:name%' AND department_id = :dept"}
		}, ":name inside a string literal"},
		{"param in E string", func(d *store.CustomAPI) {
			d.Statements = []string{`SELECT E'it\'s :dept', :name, :dept`}
		}, ":dept inside a string literal"},
		{"param in quoted name", func(d *store.CustomAPI) { d.Statements = []string{`SELECT 1 AS ":dept", :dept, :name`} }, "inside a quoted name"},
		{"param in dollar quote", func(d *store.CustomAPI) { d.Statements = []string{`SELECT $x$ :name $x$, :dept, :name`} }, "inside a dollar-quoted string"},
		{"positional", func(d *store.CustomAPI) { d.Statements = []string{"SELECT $1, :dept, :name"} }, "positional placeholder"},
		{"two statements", func(d *store.CustomAPI) {
			d.Statements = []string{"SELECT :dept, :name; DROP TABLE employees"}
		}, "one statement per entry"},
		{"unclosed string", func(d *store.CustomAPI) { d.Statements = []string{"SELECT ':dept, :name"} }, "not closed"},
		{"unclosed comment", func(d *store.CustomAPI) { d.Statements = []string{"SELECT :dept, :name /* x"} }, "not closed"},
		{"only a comment", func(d *store.CustomAPI) { d.Statements = []string{"-- nothing"} }, "empty"},
		{"ddl", func(d *store.CustomAPI) { d.Statements = []string{"DROP TABLE employees"} }, "must begin with SELECT"},
		{"write verb in read", func(d *store.CustomAPI) {
			d.Statements = []string{"DELETE FROM employees WHERE id = :dept AND full_name = :name"}
		}, "declare mode: write"},
		{"two reads", func(d *store.CustomAPI) {
			d.Statements = []string{"SELECT :dept", "SELECT :name"}
		}, "exactly one statement"},
		{"GET write", func(d *store.CustomAPI) { d.Mode = store.ModeWrite }, "GET API must be mode read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := readDef()
			d.Params = slices.Clone(d.Params)
			c.edit(&d)
			err := Check(d)
			if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("got %v, want Invalid mentioning %q", err, c.mention)
			}
		})
	}
	for _, c := range []struct {
		name    string
		stmts   []string
		mention string
	}{
		{"select in write", []string{"SELECT :id, :dept"}, "begins with INSERT, UPDATE or DELETE, not SELECT"},
		{"with in write", []string{"WITH x AS (DELETE FROM t RETURNING 1) UPDATE employees SET d = :dept WHERE id = :id"}, "not WITH"},
		{"other schema", []string{"UPDATE hr.employees SET d = :dept WHERE id = :id"}, `only tables of its own schema "public"`},
		{"insert without into", []string{"INSERT employees VALUES (:id, :dept)"}, "INSERT must be followed by INTO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := writeDef()
			d.Statements = c.stmts
			err := Check(d)
			if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("got %v, want Invalid mentioning %q", err, c.mention)
			}
		})
	}
}

// TestStatements: parameters become positional placeholders with their
// values as arguments, in order, a repeated name bound twice; casts,
// comments, quotes and literals that merely contain a colon pass through.
func TestStatements(t *testing.T) {
	d := readDef()
	d.Params = []store.CustomParam{{Name: "a", Type: "string"}, {Name: "b_2", Type: "integer"}}
	d.Statements = []string{`SELECT :a::text AS "x:y", 'time 10:30 and :zz', $q$ :other $q$ -- :a in a comment
/* :b_2 /* nested :a */ */ FROM t WHERE c = :b_2 OR d = :a AND e = ARRAY[1,2][1 : 2];`}
	a, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := a.Bind(map[string]any{"a": "x'; DROP TABLE t; --", "b_2": json.Number("7")})
	if err != nil {
		t.Fatal(err)
	}
	st := a.Statements(func(n int) string { return "$" + strconv.Itoa(n) }, vals)[0]
	wantSQL := `SELECT $1::text AS "x:y", 'time 10:30 and :zz', $q$ :other $q$ -- :a in a comment
/* :b_2 /* nested :a */ */ FROM t WHERE c = $2 OR d = $3 AND e = ARRAY[1,2][1 : 2]`
	if st.SQL != wantSQL {
		t.Fatalf("SQL\n%s\nwant\n%s", st.SQL, wantSQL)
	}
	if !slices.Equal(st.Args, []any{"x'; DROP TABLE t; --", int64(7), "x'; DROP TABLE t; --"}) {
		t.Fatalf("args %#v", st.Args)
	}
	qm := a.Statements(func(int) string { return "?" }, vals)[0]
	if strings.Count(qm.SQL, "?") != 3 {
		t.Fatalf("? placeholders: %s", qm.SQL)
	}
}

func TestBind(t *testing.T) {
	d := store.CustomAPI{URI: "x", Method: "POST", Version: 1, Type: "pg", Schema: "s", Mode: store.ModeRead, Roles: []string{"r"},
		Params: []store.CustomParam{
			{Name: "s", Type: "string", MaxLength: ptr(3)},
			{Name: "i", Type: "integer", Min: ptr(-5.0), Max: ptr(5.0)},
			{Name: "n", Type: "number", Default: ptr("1.50")},
			{Name: "b", Type: "boolean"},
			{Name: "d", Type: "date"},
			{Name: "ts", Type: "timestamp"},
			{Name: "u", Type: "uuid"},
			{Name: "req", Type: "string", Required: true},
		},
		Statements: []string{"SELECT :s, :i, :n, :b, :d, :ts, :u, :req"},
	}
	a, err := Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Bind(map[string]any{"req": "r", "s": "äbc", "i": "-5", "b": "TRUE", "d": "2024-02-29",
		"ts": "2024-02-29T10:00:00+02:00", "u": "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"req": "r", "s": "äbc", "i": int64(-5), "n": "1.50", "b": true, "d": "2024-02-29",
		"ts": "2024-02-29T08:00:00Z", "u": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
	// Absent optional without default: NULL.
	got, _ = a.Bind(map[string]any{"req": "r", "b": true, "i": json.Number("3"), "n": json.Number("2e3"), "ts": "2024-01-01T00:00:00"})
	if got["s"] != nil || got["b"] != true || got["i"] != int64(3) || got["n"] != "2e3" || got["ts"] != "2024-01-01T00:00:00Z" {
		t.Fatalf("bind %v", got)
	}
	for _, c := range []struct {
		vals    map[string]any
		mention string
	}{
		{map[string]any{"req": "r", "zzz": 1, "aaa": 1}, `unknown parameter "aaa": POST x v1 takes s, i, n, b, d, ts, u, req`},
		{map[string]any{}, `missing required parameter "req" (string)`},
		{map[string]any{"req": json.Number("1")}, `parameter "req" must be a string, got a number`},
		{map[string]any{"req": true}, `parameter "req" must be a string, got a boolean`},
		{map[string]any{"req": nil}, `parameter "req" must be a string, got null`},
		{map[string]any{"req": []any{"a", "b"}}, `parameter "req" must be a single string value`},
		{map[string]any{"req": "r", "s": "abcd"}, `parameter "s" is longer than 3 characters`},
		{map[string]any{"req": "r", "i": "1 OR 1=1"}, `parameter "i" must be an integer, got "1 OR 1=1"`},
		{map[string]any{"req": "r", "i": json.Number("1.5")}, `parameter "i" must be an integer`},
		{map[string]any{"req": "r", "i": json.Number("6")}, `parameter "i" must be between -5 and 5, got 6`},
		{map[string]any{"req": "r", "n": "NaN"}, `parameter "n" must be a number`},
		{map[string]any{"req": "r", "n": "0x10"}, `parameter "n" must be a number`},
		{map[string]any{"req": "r", "b": "yes"}, `parameter "b" must be true or false`},
		{map[string]any{"req": "r", "d": "2024-02-30"}, `parameter "d" must be a date`},
		{map[string]any{"req": "r", "ts": "yesterday"}, `parameter "ts" must be a timestamp`},
		{map[string]any{"req": "r", "u": "{0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}"}, `parameter "u" must be a UUID`},
		{map[string]any{"req": "r", "u": json.Number("1")}, `parameter "u" must be a uuid, got a number`},
	} {
		_, err := a.Bind(c.vals)
		if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%v: got %v, want mention of %q", c.vals, err, c.mention)
		}
	}
}

// FuzzBind: whatever a caller sends as a value, the SQL text is the same
// and the value reaches only the argument list.
func FuzzBind(f *testing.F) {
	for _, s := range []string{"'; DROP TABLE x; --", "1 OR 1=1", ":s", "$1", "?", `\'`, "x\x00y", "é"} {
		f.Add(s, s)
	}
	d := store.CustomAPI{URI: "x", Method: "POST", Version: 1, Type: "pg", Schema: "s", Mode: store.ModeRead, Roles: []string{"r"},
		Params:     []store.CustomParam{{Name: "s", Type: "string"}, {Name: "i", Type: "integer"}},
		Statements: []string{"SELECT * FROM t WHERE a = :s AND b = :i AND c = :s"},
	}
	a, err := Compile(d)
	if err != nil {
		f.Fatal(err)
	}
	ph := func(n int) string { return "$" + strconv.Itoa(n) }
	const want = "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3"
	f.Fuzz(func(t *testing.T, s, i string) {
		vals, err := a.Bind(map[string]any{"s": s, "i": i})
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("bind error of kind %v: %v", fault.KindOf(err), err)
			}
			return
		}
		st := a.Statements(ph, vals)[0]
		if st.SQL != want {
			t.Fatalf("SQL changed with the values: %q", st.SQL)
		}
		if st.Args[0] != s || st.Args[2] != s {
			t.Fatalf("args %#v", st.Args)
		}
		if _, ok := st.Args[1].(int64); !ok {
			t.Fatalf("integer arg %#v", st.Args[1])
		}
	})
}

// FuzzCompile: any statement text either is refused as Invalid or cuts
// into parts that, with the :names put back, give the text again.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"SELECT :a", "SELECT ':a'", "SELECT $$:a$$", `SELECT ":a"`, "SELECT a::int, :a", "SELECT :a; ", "SELECT 1; SELECT 2",
		"SELECT /* :a */ :a", "SELECT E'\\':a'", "SELECT $1", "-- :a\nSELECT :a", "(SELECT :a)", "UPDATE t SET x = :a",
		"SELECT 'é:a'", "SELECT :a:a", "SELECT $t$ $u$ $t$ :a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		d := store.CustomAPI{URI: "x", Method: "POST", Version: 1, Type: "pg", Schema: "s", Mode: store.ModeRead, Roles: []string{"r"},
			Params: []store.CustomParam{{Name: "a", Type: "string"}}, Statements: []string{sql}}
		a, err := Compile(d)
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("kind %v: %v", fault.KindOf(err), err)
			}
			return
		}
		st := a.stmts[0]
		var b strings.Builder
		for j, name := range st.names {
			b.WriteString(st.parts[j])
			b.WriteString(":" + name)
		}
		b.WriteString(st.parts[len(st.names)])
		got := b.String()
		if got != sql && !strings.HasPrefix(sql, got+";") {
			t.Fatalf("parts %q do not give back %q", st.parts, sql)
		}
		r := a.Statements(func(int) string { return "?" }, map[string]any{"a": "v"})[0]
		if len(r.Args) != len(st.names) || strings.Count(r.SQL, "?")-strings.Count(sql, "?") != len(st.names) {
			t.Fatalf("rendered %q with %d args for %d names", r.SQL, len(r.Args), len(st.names))
		}
	})
}
