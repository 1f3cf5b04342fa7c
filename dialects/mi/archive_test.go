package mi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/query"
)

// TestHistoryRoll: with keep 2 and chunk 3, the write that gives a row its
// sixth raw entry rolls the oldest four into one zstd JSON-lines blob in
// the same transaction; versions go on after the archive; HistoryAt finds
// an entry in the archive when no raw entry is old enough, the raw one
// otherwise, and nothing before the first.
func TestHistoryRoll(t *testing.T) {
	t.Setenv(EnvHistoryKeepRecent, "2")
	t.Setenv(EnvHistoryChunkMin, "3")
	s, dir := openItems(t)
	db := rawDB(t, dbFile(dir, "items"))
	ctx := context.Background()
	clock := int64(1_800_000_000)
	s.now = func() time.Time { return time.Unix(clock, 0) }
	write(t, s, query.Plan{Action: query.Insert, Columns: []string{"title", "qty"}, Rows: [][]any{{"A", json.Number("0")}}})
	var id string
	if err := db.QueryRow(`SELECT id FROM rows`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		clock += 10
		write(t, s, query.Plan{Action: query.Update, Where: cond("title", query.Eq, "A"),
			Set: []query.Assign{{Column: "qty", Value: json.Number(strconv.Itoa(i))}}})
		raw, archived := count(t, db, "SELECT COUNT(*) FROM _row_history"), count(t, db, "SELECT COUNT(*) FROM _row_history_archive")
		// v1 create + i updates; the sixth entry (i = 5) triggers the roll.
		wantRaw, wantArchived := i+1, 0
		if i >= 5 {
			wantRaw, wantArchived = i+1-4, 1
		}
		if raw != wantRaw || archived != wantArchived {
			t.Fatalf("after update %d: %d raw, %d archived; want %d, %d", i, raw, archived, wantRaw, wantArchived)
		}
	}
	var vs, ve, rs, re, n int64
	var format string
	var blob []byte
	if err := db.QueryRow(`SELECT version_start, version_end, recorded_start, recorded_end, entry_count, format, blob FROM _row_history_archive WHERE row_id = ?`, id).
		Scan(&vs, &ve, &rs, &re, &n, &format, &blob); err != nil {
		t.Fatal(err)
	}
	if vs != 1 || ve != 4 || rs != 1_800_000_000 || re != 1_800_000_030 || n != 4 || format != "jsonl-zstd" {
		t.Fatalf("archive %d..%d at %d..%d, %d entries, %s", vs, ve, rs, re, n, format)
	}
	dec, _ := zstd.NewReader(nil)
	plain, err := dec.DecodeAll(blob, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(plain))
	var lines []archiveLine
	for sc.Scan() {
		var l archiveLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 4 || lines[0].Op != "create" || lines[3].Version != 4 || lines[3].Op != "update" || *lines[2].DataJSON != `{"qty":2,"title":"A"}` {
		t.Fatalf("lines %+v (v3 data %s)", lines, *lines[2].DataJSON)
	}
	if vmax := count(t, db, "SELECT MAX(version) FROM _row_history WHERE row_id = ?", id); vmax != 7 {
		t.Fatalf("newest version %d, want 7", vmax)
	}

	e, err := s.HistoryAt(ctx, "items", id, 1_800_000_025) // between v3 (…020) and v4 (…030)
	if err != nil || e.Version != 3 || e.Data != `{"qty":2,"title":"A"}` || e.Op != "update" {
		t.Fatalf("archived entry: %+v %v", e, err)
	}
	e, err = s.HistoryAt(ctx, "items", id, 1_800_000_055)
	if err != nil || e.Version != 6 || e.Data != `{"qty":5,"title":"A"}` {
		t.Fatalf("raw entry: %+v %v", e, err)
	}
	if _, err := s.HistoryAt(ctx, "items", id, 1_799_999_999); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("before the first entry: %v", err)
	}

	// A blob that is not zstd is a storage error, not a silent miss.
	if _, err := db.Exec(`UPDATE _row_history_archive SET blob = X'28b52ffd00' WHERE row_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HistoryAt(ctx, "items", id, 1_800_000_025); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("corrupt archive: %v", err)
	}
}

// TestPurgePolicyFrom: the environment, and the defaults for values that
// are not usable.
func TestPurgePolicyFrom(t *testing.T) {
	for _, c := range []struct {
		keep, chunk string
		want        purgePolicy
	}{
		{"", "", purgePolicy{16, 48}},
		{"0", "1", purgePolicy{0, 1}},
		{"-1", "0", purgePolicy{16, 48}},
		{"x", " 7 ", purgePolicy{16, 7}},
	} {
		env := map[string]string{EnvHistoryKeepRecent: c.keep, EnvHistoryChunkMin: c.chunk}
		if got := purgePolicyFrom(func(k string) string { return env[k] }); got != c.want {
			t.Errorf("%q %q: %+v, want %+v", c.keep, c.chunk, got, c.want)
		}
	}
}
