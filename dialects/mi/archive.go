package mi

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/littlebitlabs/minimal/fault"
)

// The history purge of mini-app-mcp: a row keeps its newest raw
// _row_history entries; when it has more than keep + chunk, its oldest
// entries (at most chunk + 1) roll, in the transaction of the write that
// added the last one, into one _row_history_archive blob — zstd-compressed
// JSON lines {version, recorded_at, op, data_json} — and leave the raw
// table. HistoryAt reads both.

// Environment of the purge policy and its defaults.
const (
	EnvHistoryKeepRecent = "MINI_APP_HISTORY_KEEP_RECENT"
	EnvHistoryChunkMin   = "MINI_APP_HISTORY_CHUNK_MIN"

	DefaultHistoryKeepRecent = 16
	DefaultHistoryChunkMin   = 48
)

// archiveFormat is the format column of the blobs written here.
const archiveFormat = "jsonl-zstd"

// purgePolicy is how many raw entries a row keeps and how many roll at
// once.
type purgePolicy struct{ keep, chunk int64 }

// purgePolicyFrom reads the policy through getenv; a value that is not a
// positive integer (zero for keep) takes the default.
func purgePolicyFrom(getenv func(string) string) purgePolicy {
	p := purgePolicy{keep: DefaultHistoryKeepRecent, chunk: DefaultHistoryChunkMin}
	if n, err := strconv.ParseInt(strings.TrimSpace(getenv(EnvHistoryKeepRecent)), 10, 64); err == nil && n >= 0 {
		p.keep = n
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(getenv(EnvHistoryChunkMin)), 10, 64); err == nil && n > 0 {
		p.chunk = n
	}
	return p
}

// archiveLine is one entry inside a blob.
type archiveLine struct {
	Version    int64   `json:"version"`
	RecordedAt int64   `json:"recorded_at"`
	Op         string  `json:"op"`
	DataJSON   *string `json:"data_json,omitempty"`
}

var (
	encoder, _ = zstd.NewWriter(nil)
	decoder, _ = zstd.NewReader(nil)
)

// maxArchiveBytes bounds a decompressed blob: chunk entries of rows that
// mini-app-mcp caps well below this.
const maxArchiveBytes = 256 << 20

// rollHistory moves a row's oldest raw entries into an archive blob when it
// has more than keep + chunk of them.
func rollHistory(ctx context.Context, tx *sql.Tx, p purgePolicy, table, rowID string) error {
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM _row_history WHERE table_name = ? AND row_id = ?`, table, rowID).Scan(&n); err != nil {
		return err
	}
	if n <= p.keep+p.chunk {
		return nil
	}
	roll := min(n-p.keep, p.chunk+1)
	rows, err := tx.QueryContext(ctx, `SELECT version, recorded_at, op, data_json FROM _row_history
        WHERE table_name = ? AND row_id = ? ORDER BY version LIMIT ?`, table, rowID, roll)
	if err != nil {
		return err
	}
	var (
		plain     bytes.Buffer
		lines     []archiveLine
		enc       = json.NewEncoder(&plain)
		scanError error
	)
	for rows.Next() {
		var l archiveLine
		var data sql.NullString
		if scanError = rows.Scan(&l.Version, &l.RecordedAt, &l.Op, &data); scanError != nil {
			break
		}
		if data.Valid {
			l.DataJSON = &data.String
		}
		lines = append(lines, l)
		if scanError = enc.Encode(l); scanError != nil {
			break
		}
	}
	rows.Close()
	if scanError != nil {
		return scanError
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(lines) == 0 {
		return nil
	}
	first, last := lines[0], lines[len(lines)-1]
	blob := encoder.EncodeAll(plain.Bytes(), nil)
	if _, err := tx.ExecContext(ctx, `INSERT INTO _row_history_archive
        (table_name, row_id, version_start, version_end, recorded_start, recorded_end, entry_count, format, blob)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		table, rowID, first.Version, last.Version, first.RecordedAt, last.RecordedAt, len(lines), archiveFormat, blob); err != nil {
		return err
	}
	// The rolled entries are the row's lowest versions up to last's.
	_, err = tx.ExecContext(ctx, `DELETE FROM _row_history WHERE table_name = ? AND row_id = ? AND version <= ?`,
		table, rowID, last.Version)
	return err
}

// archivedAt returns the latest archived entry of a row recorded at or
// before at (ties: the highest version), found in the newest blob that
// starts at or before at; ok is false when there is none.
func archivedAt(ctx context.Context, db *sql.DB, table, rowID string, at int64) (HistoryEntry, bool, error) {
	var blob []byte
	var format string
	err := db.QueryRowContext(ctx, `SELECT format, blob FROM _row_history_archive
        WHERE table_name = ? AND row_id = ? AND recorded_start <= ?
        ORDER BY version_end DESC LIMIT 1`, table, rowID, at).Scan(&format, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return HistoryEntry{}, false, nil
	}
	if err != nil {
		return HistoryEntry{}, false, err
	}
	if format != archiveFormat {
		return HistoryEntry{}, false, fault.New(fault.Unavailable, "storage error: history archive of row %s has format %q, not %s", rowID, format, archiveFormat)
	}
	plain, err := decoder.DecodeAll(blob, nil)
	if err != nil || len(plain) > maxArchiveBytes {
		return HistoryEntry{}, false, fault.New(fault.Unavailable, "storage error: history archive of row %s cannot be read", rowID)
	}
	var best HistoryEntry
	found := false
	sc := bufio.NewScanner(bytes.NewReader(plain))
	sc.Buffer(make([]byte, 0, 64<<10), maxArchiveBytes)
	for sc.Scan() {
		var l archiveLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return HistoryEntry{}, false, fault.New(fault.Unavailable, "storage error: history archive of row %s has a bad line", rowID)
		}
		if l.RecordedAt > at || l.DataJSON == nil {
			continue
		}
		if !found || l.RecordedAt > best.RecordedAt || (l.RecordedAt == best.RecordedAt && l.Version > best.Version) {
			best, found = HistoryEntry{Version: l.Version, RecordedAt: l.RecordedAt, Op: l.Op, Data: *l.DataJSON}, true
		}
	}
	if err := sc.Err(); err != nil {
		return HistoryEntry{}, false, fault.New(fault.Unavailable, "storage error: history archive of row %s cannot be read", rowID)
	}
	return best, found, nil
}

// envPurgePolicy is the process's purge policy.
func envPurgePolicy() purgePolicy { return purgePolicyFrom(os.Getenv) }
