package dialects

import "runtime"

// DefaultMaxConns is the pool size of every database when Config.MaxConns
// is 0: max(4, CPUs), pgxpool's own default. A connection string's own
// pool options (pool_max_conns, max_open_conns) do not raise it.
func DefaultMaxConns() int { return max(4, runtime.NumCPU()) }

// PoolSize is the bound on the pool's open connections: MaxConns, or
// DefaultMaxConns when MaxConns is 0 or less.
func (c Config) PoolSize() int {
	if c.MaxConns > 0 {
		return min(c.MaxConns, 1<<30)
	}
	return DefaultMaxConns()
}
