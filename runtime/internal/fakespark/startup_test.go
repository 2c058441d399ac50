package fakespark

import (
	"strings"
	"testing"
	"time"
)

// TestSparkStartupSequence: with SparkStartup's timings the stand-in answers /api/v1 as a real
// driver does while it starts: Jetty's bare 404, the starting-up page, 404 again, 302 to
// /jobs/, then JSON.
func TestSparkStartupSequence(t *testing.T) {
	const w = 150 * time.Millisecond
	s, err := Start(Options{AppID: "spark-1", Startup: SparkStartup(w, w, w, w, w)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var seen []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		resp, body := get(t, "http://"+s.Addr+"/api/v1/applications", nil)
		what := resp.Status
		switch {
		case strings.Contains(body, "Spark is starting up"):
			what = "starting-up"
		case resp.StatusCode == 302:
			what = "302 " + resp.Header.Get("Location")
		case resp.StatusCode == 200:
			what = "json"
		}
		if len(seen) == 0 || seen[len(seen)-1] != what {
			seen = append(seen, what)
		}
		if what == "json" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := []string{"404 Not Found", "starting-up", "404 Not Found", "302 http://" + s.Addr + "/jobs/", "json"}
	if strings.Join(seen, " | ") != strings.Join(want, " | ") {
		t.Errorf("sequence\n got %q\nwant %q", seen, want)
	}
}

// TestFilterPlacement: Spark's filters live in the contexts it attaches, so Jetty-level
// answers (no context yet, a context root without its slash) are not filtered, while the
// starting-up page, the catch-all redirect and the REST API are.
func TestFilterPlacement(t *testing.T) {
	s, err := Start(Options{AppID: "spark-1", State: Bare, Filter: JWS, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "http://" + s.Addr
	code := func(path string) int {
		resp, _ := get(t, base+path, nil)
		return resp.StatusCode
	}
	for _, st := range []State{Bare, Attaching} {
		s.Set(st)
		if c := code("/api/v1/applications"); c != 404 {
			t.Errorf("state %d: %d, want Jetty's unfiltered 404", st, c)
		}
	}
	s.Set(StartingUp)
	if c := code("/api/v1/applications"); c != 403 {
		t.Errorf("starting-up page: %d, want the filter's 403", c)
	}
	s.Set(Ready)
	if c := code("/jobs"); c != 302 {
		t.Errorf("/jobs: %d, want Jetty's unfiltered 302 to /jobs/", c)
	}
	for _, p := range []string{"/", "/nowhere", "/api/v1/applications"} {
		if c := code(p); c != 403 {
			t.Errorf("%s: %d, want the filter's 403", p, c)
		}
	}
}

// TestCatchAllRedirect: every path no context serves is the root context's: 302 to /jobs/.
func TestCatchAllRedirect(t *testing.T) {
	s, err := Start(Options{AppID: "spark-1", State: Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{"/", "/nowhere", "/apps/wc/jobs/"} {
		resp, _ := get(t, "http://"+s.Addr+p, nil)
		if resp.StatusCode != 302 || resp.Header.Get("Location") != "http://"+s.Addr+"/jobs/" {
			t.Errorf("%s: %s to %q", p, resp.Status, resp.Header.Get("Location"))
		}
	}
}

// TestHang: a UI whose thread pool is exhausted accepts and never answers.
func TestHang(t *testing.T) {
	s, err := Start(Options{AppID: "spark-1", State: Ready, Hang: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := *noFollow
	c.Timeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := c.Get("http://" + s.Addr + "/api/v1/applications"); err == nil || time.Since(start) < 250*time.Millisecond {
		t.Errorf("answered: %v after %s", err, time.Since(start))
	}
}
