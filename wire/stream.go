package wire

import (
	"io"
	"sync"

	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/fault"
)

const (
	// flushAt is the buffered size past which Stream hands the buffer to the
	// writer. It is checked between rows, so output always ends on a row.
	flushAt = 32 << 10
	// bufCap is the capacity of a fresh buffer: room for flushAt plus a row.
	bufCap = 64 << 10
	// maxPooledCap bounds the buffers kept for reuse; a buffer grown larger
	// by one huge row is left to the garbage collector.
	maxPooledCap = 1 << 20
	// maxDepth bounds the nesting of []any and map[string]any cells. Only a
	// value that contains itself can reach it; deeper values are null.
	maxDepth = 1000
)

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, bufCap)
	return &b
}}

// rowEncoder writes one format. begin and end write the envelope around the
// rows; row appends the i-th row (0-based) of a result.
type rowEncoder interface {
	begin(dst []byte) []byte
	row(dst []byte, i int64, vals []any) []byte
	end(dst []byte, n int64, page *Page) []byte
}

func newRowEncoder(f Format, cols []dialects.Column) (rowEncoder, error) {
	switch f {
	case JSON, "":
		return newJSONEncoder(cols, true), nil
	case NDJSON:
		return newJSONEncoder(cols, false), nil
	case CSV:
		return newCSVEncoder(cols), nil
	case XML:
		return newXMLEncoder(cols), nil
	case YAML:
		return newYAMLEncoder(cols), nil
	case BSON:
		return newBSONEncoder(cols), nil
	}
	return nil, fault.New(fault.Invalid, "invalid value %q for parameter format: allowed values are %s", string(f), allowed)
}

// Stream writes every row of rows to w in format f and returns the number of
// rows written (on an error, the number of rows encoded before it). It does
// not close rows. page, when not nil, is written after
// the rows by the formats that have an envelope (json, xml, yaml). The zero
// Format is JSON; an unknown one is a *fault.Error of kind Invalid and
// nothing is written.
//
// Rows are encoded as they are read into a buffer that is written to w each
// time it holds more than about 32 KiB, and once more at the end, so memory
// does not grow with the number of rows and every Write ends on a row
// boundary.
//
// An error from rows (Values or Err) or from w is returned as it is. Nothing
// more is written after it: in particular json, xml and yaml lack their
// closing envelope, so a client cannot take a broken result for a complete
// one. When the error comes before the first Write, w has not been written
// to at all and the caller can still answer with an error status.
func Stream(w io.Writer, f Format, rows dialects.Rows, page *Page) (int64, error) {
	cols := rows.Columns()
	enc, err := newRowEncoder(f, cols)
	if err != nil {
		return 0, err
	}
	if je, ok := enc.(*jsonEncoder); ok {
		defer je.release()
	}
	bp := bufPool.Get().(*[]byte)
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= maxPooledCap {
			*bp = buf[:0]
			bufPool.Put(bp)
		}
	}()

	buf = enc.begin(buf)
	var n int64
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return n, err
		}
		if len(vals) != len(cols) {
			return n, fault.New(fault.Internal, "encode: row has %d values for %d columns", len(vals), len(cols))
		}
		buf = enc.row(buf, n, vals)
		n++
		if len(buf) >= flushAt {
			if _, err := w.Write(buf); err != nil {
				return n, err
			}
			buf = buf[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	buf = enc.end(buf, n, page)
	if _, err := w.Write(buf); err != nil {
		return n, err
	}
	return n, nil
}
