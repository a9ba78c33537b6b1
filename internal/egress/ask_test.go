package egress

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// asker records what the proxy asks about and answers with answer.
type asker struct {
	mu     sync.Mutex
	asked  []string
	answer func(ctx context.Context) error
}

func (a *asker) ask(ctx context.Context, host string, port int) error {
	a.mu.Lock()
	a.asked = append(a.asked, net.JoinHostPort(host, strconv.Itoa(port)))
	answer := a.answer
	a.mu.Unlock()
	return answer(ctx)
}

func (a *asker) answerWith(answer func(context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.answer = answer
}

func (a *asker) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// A name not on the list is asked about, while the proxy holds the client;
// the answer lets it through or refuses it with the proxy's message.
func TestAskAboutUnlistedName(t *testing.T) {
	blocked := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	for _, tc := range []struct {
		name    string
		answer  func(context.Context) error
		timeout time.Duration
		url     string
		asked   string // "" when nothing is to be asked
		want    string // in the body, or the error
		allowed bool
	}{
		{"yes over CONNECT", func(context.Context) error { return nil }, 0, "https://www.example.com/a", "www.example.com:443", "origin: GET /a", true},
		{"yes over plain HTTP", func(context.Context) error { return nil }, 0, "http://www.example.com/b", "www.example.com:80", "origin: GET /b", true},
		{"no", func(context.Context) error { return errors.New("the user declined it") }, 0, "https://www.example.com/",
			"www.example.com:443", "www.example.com is not on the network allow-list, and the user declined it; the user can allow it with --allow-domain www.example.com", false},
		{"no one to ask", func(context.Context) error { return ErrNotAsked }, 0, "https://www.example.com/",
			"www.example.com:443", "shellgate: www.example.com is not on the network allow-list; the user can allow it", false},
		{"no answer in time", blocked, 50 * time.Millisecond, "https://www.example.com/",
			"www.example.com:443", "no one answered the question whether to allow it within 50ms", false},
		// An answer widens the list of names, never the addresses.
		{"yes to a name in the LAN", func(context.Context) error { return nil }, 0, "https://lan.example.com/",
			"lan.example.com:443", "lan.example.com resolves to 192.168.1.20", false},
		{"an IP literal is not asked about", func(context.Context) error { return nil }, 0, "https://203.0.113.7/", "", "the address 203.0.113.7 is not on the network allow-list", false},
		// Nor is an address written as a name (as inet_aton reads 127.1,
		// 2130706433, 0x7f000001): the question would name a number.
		{"a decimal address is not asked about", func(context.Context) error { return nil }, 0, "https://2130706433/", "", "2130706433 is an IPv4 address written as a name", false},
		{"a hexadecimal address is not asked about", func(context.Context) error { return nil }, 0, "http://0x7f000001/", "", "0x7f000001 is an IPv4 address written as a name", false},
		{"a short address is not asked about", func(context.Context) error { return nil }, 0, "https://127.1/", "", "127.1 is an IPv4 address written as a name", false},
		{"an octal address is not asked about", func(context.Context) error { return nil }, 0, "https://0177.0.0.1/", "", "0177.0.0.1 is an IPv4 address written as a name", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &asker{answer: tc.answer}
			e := newEnvWith(t, func(p *Proxy) { p.Ask, p.AskTimeout = a.ask, tc.timeout }, "example.com")
			c := e.client(t, "http")
			body, err := get(t, c, tc.url)
			got := body
			if err != nil {
				got = err.Error()
			}
			if (err == nil) != tc.allowed || !strings.Contains(got, tc.want) {
				t.Errorf("%s: %q, %v; want %q (allowed %v)", tc.url, body, err, tc.want, tc.allowed)
			}
			if q := a.questions(); tc.asked == "" && len(q) > 0 || tc.asked != "" && (len(q) != 1 || q[0] != tc.asked) {
				t.Errorf("asked %q, want %q", q, tc.asked)
			}
			c.CloseIdleConnections() // the event of an allowed connection comes at its end
			ev := e.waitEvents(func(ev []Event) bool { return len(ev) > 0 })
			if ev[0].Allowed != tc.allowed || ev[0].Approved != tc.allowed || ev[0].Start.IsZero() {
				t.Errorf("event %+v: want allowed and approved %v, a start", ev[0], tc.allowed)
			}
		})
	}
}

// SOCKS5 clients are asked about too; a refusal is reply 2.
func TestAskOverSOCKS(t *testing.T) {
	a := &asker{answer: func(context.Context) error { return nil }}
	e := newEnvWith(t, func(p *Proxy) { p.Ask = a.ask }, "example.com")
	if got, err := get(t, e.client(t, "socks5"), "https://www.example.com/s"); err != nil || !strings.HasPrefix(got, "origin: GET /s") {
		t.Errorf("allowed over SOCKS5: %q, %v", got, err)
	}
	a.answerWith(func(context.Context) error { return errors.New("the user declined it") })
	if _, err := get(t, e.client(t, "socks5"), "https://www.example.com/s"); err == nil {
		t.Error("declined over SOCKS5, and let through")
	}
	if q := a.questions(); len(q) != 2 {
		t.Errorf("asked %q, want twice (the proxy remembers nothing; the Gate does)", q)
	}
}
