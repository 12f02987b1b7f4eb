package netbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
)

// MaxObjectBytes bounds what one /object request may ask for.
const MaxObjectBytes = 16 << 20

// MaxBarrierSize bounds how many clients one barrier waits for.
const MaxBarrierSize = 1000

// Handler serves GET /object?bytes=N (N bytes), GET /ping (a few bytes),
// and GET /barrier?name=B&size=N, which answers once N requests for B
// have come, so that the clients of one run start together however far
// apart their pods started.
func Handler() http.Handler {
	zeros := make([]byte, 64<<10)
	mux := http.NewServeMux()
	barriers := newBarriers()
	mux.HandleFunc("GET /barrier", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("name")
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if name == "" || err != nil || size < 1 || size > MaxBarrierSize {
			http.Error(w, fmt.Sprintf("want name and size, 1 to %d", MaxBarrierSize), http.StatusBadRequest)
			return
		}
		select {
		case <-barriers.arrive(name, size):
			_, _ = w.Write([]byte("go"))
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /object", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > MaxObjectBytes {
			http.Error(w, fmt.Sprintf("bytes: want 0 to %d", MaxObjectBytes), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		for n > 0 {
			k := min(n, len(zeros))
			if _, err := w.Write(zeros[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("pong"))
	})
	return mux
}

// barriers are the named barriers: each releases its waiters once size
// of them have arrived, and every later arrival at once.
type barriers struct {
	mu     sync.Mutex
	byName map[string]*barrier
}

type barrier struct {
	arrived int
	open    chan struct{}
}

func newBarriers() *barriers { return &barriers{byName: map[string]*barrier{}} }

// arrive counts one arrival at name and returns what closes once size
// have arrived.
func (b *barriers) arrive(name string, size int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.byName[name]
	if br == nil {
		br = &barrier{open: make(chan struct{})}
		b.byName[name] = br
	}
	br.arrived++
	if br.arrived == size {
		close(br.open)
	}
	return br.open
}

// httpService is the netbench server, seen from a client.
type httpService struct {
	base string
	// objects and pings are separate connections, so that a small call
	// never waits behind an object: one for the fetches, which go one at
	// a time, and PingConnections kept open for the small calls.
	objects, pings *http.Client
}

// NewHTTP is the netbench server at base (http://host:port).
func NewHTTP(base string) Service {
	return &httpService{
		base:    base,
		objects: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}},
		pings:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: PingConnections}},
	}
}

// Prepare has nothing to do: the server makes objects of any size.
func (s *httpService) Prepare(context.Context, int) error { return nil }

func (s *httpService) Await(ctx context.Context, name string, size int) error {
	q := url.Values{"name": {name}, "size": {strconv.Itoa(size)}}
	return get(ctx, http.DefaultClient, s.base+"/barrier?"+q.Encode())
}

func (s *httpService) Fetch(ctx context.Context, bytes int) error {
	return get(ctx, s.objects, fmt.Sprintf("%s/object?bytes=%d", s.base, bytes))
}

func (s *httpService) Ping(ctx context.Context) error { return get(ctx, s.pings, s.base+"/ping") }

func (s *httpService) Close() error {
	s.objects.CloseIdleConnections()
	s.pings.CloseIdleConnections()
	return nil
}

func (s *httpService) String() string { return s.base }

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
