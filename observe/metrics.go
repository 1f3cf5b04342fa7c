package observe

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Names of the gateway's series, as listed in docs/operations.md. A test
// checks that the list there and the registry agree.
const (
	MetricRequests        = "minimal_http_requests_total"
	MetricRequestDuration = "minimal_http_request_duration_seconds"
	MetricInFlight        = "minimal_http_requests_in_flight"
	MetricRateLimited     = "minimal_rate_limited_total"
	MetricRefusals        = "minimal_refusals_total"
	MetricSessions        = "minimal_ai_sessions_active"
	MetricPoolMax         = "minimal_db_pool_max_connections"
	MetricPoolConns       = "minimal_db_pool_connections"
	MetricPoolAcquires    = "minimal_db_pool_acquires_total"
	MetricPoolEmpty       = "minimal_db_pool_empty_acquires_total"
	MetricPoolCanceled    = "minimal_db_pool_canceled_acquires_total"
	MetricPoolAcquireWait = "minimal_db_pool_acquire_wait_seconds_total"
	MetricAuditQueue      = "minimal_audit_queue_length"
	MetricAuditWritten    = "minimal_audit_written_total"
	MetricAuditDropped    = "minimal_audit_dropped_total"
	MetricBuildInfo       = "minimal_build_info"
)

const (
	defaultSessionsMaxAge  = 15 * time.Second
	sessionsCountTimeout   = 2 * time.Second
	metricsHandlerTimeout  = 10 * time.Second
	metricsMaxInFlightReqs = 4
)

// durationBuckets cover a cached read (a millisecond) up to the default
// statement timeout (30 s).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// Metrics is the gateway's Prometheus registry and the series it owns.
// Every method is safe on a nil *Metrics and then does nothing, so a
// gateway started with metrics off needs no checks at the call sites.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight *prometheus.GaugeVec
	limited  *prometheus.CounterVec
	refusals *prometheus.CounterVec

	// series caches the children of requests, duration and inFlight by
	// their labels (seriesKey, and a face string for inFlight), so that a
	// request looks its series up in one map instead of hashing its labels
	// in three vectors. It holds as many entries as there are series.
	series sync.Map

	mu       sync.Mutex
	pools    func() []Pool
	audit    func() AuditStats
	sessions sessionsSource
}

// sessionsSource counts live AI sessions at scrape time, at most once per
// maxAge; between counts (and when a count fails) the last value stands.
type sessionsSource struct {
	count  func(context.Context) (int64, error)
	maxAge time.Duration
	last   float64
	at     time.Time
}

// Pool is one database pool at scrape time, as the engine reports it.
type Pool struct {
	// Database names the pool: the registered database's id, or
	// "org/project/type/schema" when the operator opted in to tenant
	// names (api.Config.MetricsTenantLabels).
	Database string
	// Max is the pool's size; Idle, Acquired and Constructing its
	// connections by state.
	Max, Idle, Acquired, Constructing int64
	// Acquires counts acquisitions since the pool opened, EmptyAcquires
	// those that had to wait for a connection, CanceledAcquires those that
	// gave up (timeout or cancel).
	Acquires, EmptyAcquires, CanceledAcquires int64
	// AcquireWait is the total time spent acquiring.
	AcquireWait time.Duration
}

// AuditStats is the state of the asynchronous audit writer.
type AuditStats struct {
	// Queued entries wait to be written.
	Queued int64
	// Written entries reached the store.
	Written uint64
	// DroppedFull were dropped because the queue was full; DroppedError
	// because the store refused the write.
	DroppedFull, DroppedError uint64
}

// seriesKey labels a request's counter and histogram children.
type seriesKey struct {
	face, route, method string
	status              int
}

// requestSeries are a request's counter and duration histogram.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// request returns the series of a request by face, route, method and status.
func (m *Metrics) request(face, route, method string, status int) requestSeries {
	k := seriesKey{face, route, method, status}
	if v, ok := m.series.Load(k); ok {
		return v.(requestSeries)
	}
	rs := requestSeries{
		count:    m.requests.WithLabelValues(face, route, method, strconv.Itoa(status)),
		duration: m.duration.WithLabelValues(face, route, method),
	}
	v, _ := m.series.LoadOrStore(k, rs)
	return v.(requestSeries)
}

// inFlightOf returns the in-flight gauge of face.
func (m *Metrics) inFlightOf(face string) prometheus.Gauge {
	if v, ok := m.series.Load(face); ok {
		return v.(prometheus.Gauge)
	}
	v, _ := m.series.LoadOrStore(face, m.inFlight.WithLabelValues(face))
	return v.(prometheus.Gauge)
}

// NewMetrics builds the registry: the gateway's series, the Go runtime and
// process collectors, and minimal_build_info{version}.
func NewMetrics(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "HTTP requests answered, by face (rest, mcp), route pattern, method and status.",
		}, []string{"face", "route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricRequestDuration,
			Help:    "Time from request to the end of the answer, by face, route pattern and method.",
			Buckets: durationBuckets,
		}, []string{"face", "route", "method"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricInFlight,
			Help: "Requests being served, by face.",
		}, []string{"face"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRateLimited,
			Help: "Requests refused with 429 by the per-identity rate limit, by face.",
		}, []string{"face"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRefusals,
			Help: "Data operations refused by a permission gate, by face and gate (lock, template, scope, hidden).",
		}, []string{"face", "gate"}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        MetricBuildInfo,
		Help:        "Always 1; the version label names the running build.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	build.Set(1)
	m.reg.MustRegister(
		m.requests, m.duration, m.inFlight, m.limited, m.refusals, build,
		&stateCollector{m: m},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics when asked). Nil metrics answer 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Timeout:             metricsHandlerTimeout,
		MaxRequestsInFlight: metricsMaxInFlightReqs,
		EnableOpenMetrics:   true,
	})
}

// Registry exposes the registry, for tests and for registering more
// collectors.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Refused counts one refusal by a permission gate; the face comes from ctx.
func (m *Metrics) Refused(ctx context.Context, gate string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(faceLabel(Face(ctx)), gate).Inc()
}

// WatchPools sets the function reporting the database pools at scrape
// time. A later call replaces the earlier one.
func (m *Metrics) WatchPools(f func() []Pool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.pools = f
	m.mu.Unlock()
}

// WatchAudit sets the function reporting the audit writer's state.
func (m *Metrics) WatchAudit(f func() AuditStats) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.audit = f
	m.mu.Unlock()
}

// WatchSessions sets the function counting live AI sessions. It runs at
// scrape time, at most once per maxAge (15 s when 0; at every scrape when
// negative), bounded by a 2 s timeout; a failed count keeps the last value.
func (m *Metrics) WatchSessions(count func(context.Context) (int64, error), maxAge time.Duration) {
	if m == nil {
		return
	}
	if maxAge == 0 {
		maxAge = defaultSessionsMaxAge
	}
	m.mu.Lock()
	m.sessions = sessionsSource{count: count, maxAge: maxAge}
	m.mu.Unlock()
}

func faceLabel(f string) string {
	if f == "" {
		return "other"
	}
	return f
}

var (
	descSessions     = prometheus.NewDesc(MetricSessions, "Open AI sessions that have not idled out, across the control plane.", nil, nil)
	descPoolMax      = prometheus.NewDesc(MetricPoolMax, "Size of the database's connection pool.", []string{"database"}, nil)
	descPoolConns    = prometheus.NewDesc(MetricPoolConns, "Connections of the database's pool by state (idle, acquired, constructing).", []string{"database", "state"}, nil)
	descPoolAcquires = prometheus.NewDesc(MetricPoolAcquires, "Connections acquired from the database's pool.", []string{"database"}, nil)
	descPoolEmpty    = prometheus.NewDesc(MetricPoolEmpty, "Acquisitions that found no idle connection and had to wait or connect.", []string{"database"}, nil)
	descPoolCanceled = prometheus.NewDesc(MetricPoolCanceled, "Acquisitions that gave up (acquisition timeout or cancelled request).", []string{"database"}, nil)
	descPoolWait     = prometheus.NewDesc(MetricPoolAcquireWait, "Total time spent acquiring connections from the database's pool.", []string{"database"}, nil)
	descAuditQueue   = prometheus.NewDesc(MetricAuditQueue, "Audit entries waiting to be written to the control plane.", nil, nil)
	descAuditWritten = prometheus.NewDesc(MetricAuditWritten, "Audit entries written to the control plane.", nil, nil)
	descAuditDropped = prometheus.NewDesc(MetricAuditDropped, "Audit entries lost: queue full (reason queue_full) or store write failed (reason write_error). Each is still in the log.", []string{"reason"}, nil)
)

// stateCollector reports what lives elsewhere — pools, the audit writer,
// sessions — read when Prometheus scrapes.
type stateCollector struct{ m *Metrics }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descPoolMax, descPoolConns, descPoolAcquires, descPoolEmpty, descPoolCanceled, descPoolWait, descAuditQueue, descAuditWritten, descAuditDropped} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	m.mu.Lock()
	pools, audit := m.pools, m.audit
	sessions, haveSessions := m.sessionsValue()
	m.mu.Unlock()

	if haveSessions {
		ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, sessions)
	}
	if pools != nil {
		for _, p := range pools() {
			db := p.Database
			ch <- prometheus.MustNewConstMetric(descPoolMax, prometheus.GaugeValue, float64(p.Max), db)
			ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, float64(p.Idle), db, "idle")
			ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, float64(p.Acquired), db, "acquired")
			ch <- prometheus.MustNewConstMetric(descPoolConns, prometheus.GaugeValue, float64(p.Constructing), db, "constructing")
			ch <- prometheus.MustNewConstMetric(descPoolAcquires, prometheus.CounterValue, float64(p.Acquires), db)
			ch <- prometheus.MustNewConstMetric(descPoolEmpty, prometheus.CounterValue, float64(p.EmptyAcquires), db)
			ch <- prometheus.MustNewConstMetric(descPoolCanceled, prometheus.CounterValue, float64(p.CanceledAcquires), db)
			ch <- prometheus.MustNewConstMetric(descPoolWait, prometheus.CounterValue, p.AcquireWait.Seconds(), db)
		}
	}
	if audit != nil {
		a := audit()
		ch <- prometheus.MustNewConstMetric(descAuditQueue, prometheus.GaugeValue, float64(a.Queued))
		ch <- prometheus.MustNewConstMetric(descAuditWritten, prometheus.CounterValue, float64(a.Written))
		ch <- prometheus.MustNewConstMetric(descAuditDropped, prometheus.CounterValue, float64(a.DroppedFull), "queue_full")
		ch <- prometheus.MustNewConstMetric(descAuditDropped, prometheus.CounterValue, float64(a.DroppedError), "write_error")
	}
}

// sessionsValue returns the live session count, counting again when the
// last count is older than maxAge. Callers hold m.mu, which also keeps
// concurrent scrapes from counting twice.
func (m *Metrics) sessionsValue() (float64, bool) {
	s := &m.sessions
	if s.count == nil {
		return 0, false
	}
	if s.at.IsZero() || s.maxAge < 0 || time.Since(s.at) >= s.maxAge {
		ctx, cancel := context.WithTimeout(context.Background(), sessionsCountTimeout)
		n, err := s.count(ctx)
		cancel()
		if err == nil {
			s.last, s.at = float64(n), time.Now()
		}
	}
	return s.last, true
}
