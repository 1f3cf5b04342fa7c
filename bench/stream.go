package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSample is the interval at which VmRSS is read while streaming.
const rssSample = 20 * time.Millisecond

// streamResult is one full-table read.
type streamResult struct {
	format     string
	rows       int64
	bytes      int64
	elapsed    time.Duration
	startKB    int64 // VmRSS of the fresh gateway before the request
	sampledKB  int64 // highest VmRSS seen by the sampler
	hwmKB      int64 // VmHWM at the end: the kernel's peak
	samples    int
	wantRows   int
	rssMissing bool
	cpu        time.Duration // gateway CPU time for the request; -1 when unknown
}

func (r *streamResult) peakMB() float64 { return float64(max(r.hwmKB, r.sampledKB)) / 1024 }

func (r *streamResult) mbps() float64 {
	return float64(r.bytes) / (1 << 20) / r.elapsed.Seconds()
}

// streamOnce reads the whole table from gw in format (csv or json) while
// sampling the gateway's memory, and checks the row count.
func streamOnce(ctx context.Context, gw *child, base, token, format string, rows int) (*streamResult, error) {
	res := &streamResult{format: format, wantRows: rows}
	pid := gw.pid()
	st, err := procStatus(pid)
	if err != nil {
		res.rssMissing = true
		logf("RSS not measurable: %v", err)
	}
	res.startKB = st.rssKB
	logf("stream %s: %d rows from a fresh gateway (pid %d, RSS %.1f MB)", format, rows, pid, float64(st.rssKB)/1024)

	sampled := func() (int64, int) { return 0, 0 }
	if !res.rssMissing {
		sampled = sampleRSS(pid)
	}

	url := fmt.Sprintf("%s?ps=%d&pg=0&oy=id.as&format=%s", base, rows, format)
	cpu0, cpuErr := procCPU(pid)
	start := time.Now()
	n, nbytes, err := readStream(ctx, url, token, format, rows)
	res.elapsed = time.Since(start)
	res.sampledKB, res.samples = sampled()
	res.rows, res.bytes = n, nbytes
	res.cpu = -1
	if cpu1, err := procCPU(pid); err == nil && cpuErr == nil {
		res.cpu = cpu1 - cpu0
	}
	if !res.rssMissing {
		if s, perr := procStatus(pid); perr == nil {
			res.hwmKB = s.hwmKB
			res.sampledKB = max(res.sampledKB, s.rssKB)
		}
	}
	logf("stream %s: %d rows, %.1f MB in %.2f s (%.0f MB/s); gateway CPU %.2f s; RSS peak sampled %.1f MB (%d samples), VmHWM %.1f MB",
		format, n, float64(nbytes)/(1<<20), res.elapsed.Seconds(), res.mbps(), res.cpu.Seconds(), float64(res.sampledKB)/1024, res.samples, float64(res.hwmKB)/1024)
	if err != nil {
		return res, err
	}
	if n != int64(rows) {
		return res, fmt.Errorf("got %d rows, want %d", n, rows)
	}
	return res, nil
}

// readStream GETs url and reads the body to the end, counting rows: CSV
// lines less the header (the bench data holds no line breaks), JSON row
// objects by their opening {"id": (a quote inside a JSON string is escaped,
// so the marker cannot occur there). The JSON envelope must be complete.
func readStream(ctx context.Context, url, token, format string, rows int) (n, nbytes int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("LB-Access-Token", token)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	buf := make([]byte, 256<<10)
	var (
		lines   int64
		objects int64
		carry   []byte // the end of the previous chunk, for markers across chunks
		tail    []byte // the last bytes of the body
		first   = true
	)
	for {
		k, rerr := resp.Body.Read(buf)
		if k > 0 {
			chunk := buf[:k]
			nbytes += int64(k)
			switch format {
			case "csv":
				lines += int64(bytes.Count(chunk, []byte{'\n'}))
			case "json":
				if first && !bytes.HasPrefix(chunk, dataOpen) && len(chunk) >= len(dataOpen) {
					return 0, nbytes, fmt.Errorf("body does not start with %s", dataOpen)
				}
				first = false
				joined := append(carry, chunk...)
				objects += int64(bytes.Count(joined, rowMarker))
				// Keep fewer bytes than a marker so none is counted twice.
				keep := min(len(rowMarker)-1, len(joined))
				carry = append([]byte(nil), joined[len(joined)-keep:]...)
			}
			tail = append(tail, chunk...)
			if len(tail) > 256 {
				tail = append([]byte(nil), tail[len(tail)-256:]...)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return max(lines-1, objects, 0), nbytes, fmt.Errorf("read body after %d bytes: %w", nbytes, rerr)
		}
	}
	switch format {
	case "csv":
		if len(tail) > 0 && tail[len(tail)-1] != '\n' {
			return lines - 1, nbytes, fmt.Errorf("CSV body does not end with a line break")
		}
		return lines - 1, nbytes, nil
	default:
		want := fmt.Sprintf(`"page":{"number":0,"size":%d}}`, rows)
		if !bytes.Contains(tail, []byte(want)) {
			return objects, nbytes, fmt.Errorf("JSON body does not end with the page object %s: ...%s", want, tail)
		}
		return objects, nbytes, nil
	}
}

// sampleRSS reads the VmRSS of a process every rssSample until the
// returned function is called, which answers the highest value seen (kB)
// and the number of samples.
func sampleRSS(pid int) func() (maxKB int64, samples int) {
	stop := make(chan struct{})
	var (
		wg sync.WaitGroup
		hi int64
		n  int
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(rssSample)
		defer t.Stop()
		for {
			if s, err := procStatus(pid); err == nil {
				hi = max(hi, s.rssKB)
				n++
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, int) {
		close(stop)
		wg.Wait()
		return hi, n
	}
}

type status struct{ rssKB, hwmKB int64 }

// procStatus reads VmRSS and VmHWM (kB) of a process from /proc.
func procStatus(pid int) (status, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return status{}, err
	}
	defer f.Close()
	var s status
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &s.rssKB
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &s.hwmKB
		default:
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 {
			*dst, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if s.rssKB == 0 {
		return s, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return s, sc.Err()
}

// clockTick is USER_HZ, the unit of the times in /proc/PID/stat; it is 100
// on every Linux the kernel ABI allows.
const clockTick = 10 * time.Millisecond

// procCPU reads the user+system CPU time of a process from /proc.
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("no pid")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields are counted after its closing one, from field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
