package wire

import "github.com/littlebitlabs/minimal/dialects"

// AppendWriteResult encodes the answer of a write, the same on every face:
// {"rows_affected":N}, plus "data" with the returned rows (an insert's rows
// with their generated keys) when rows is not nil.
func AppendWriteResult(dst []byte, rowsAffected int64, cols []dialects.Column, rows [][]any) []byte {
	dst = append(dst, `{"rows_affected":`...)
	dst = AppendJSONValue(dst, rowsAffected)
	if rows != nil {
		dst = append(dst, `,"data":[`...)
		for i, row := range rows {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			for j, col := range cols {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = AppendJSONValue(dst, col.Name)
				dst = append(dst, ':')
				dst = AppendJSONValue(dst, row[j])
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
