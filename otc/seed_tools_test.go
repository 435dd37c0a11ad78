package otc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
)

// The tools behind seed 004's seven CallToolResponse examples: real typed
// tools whose results come from what they are given (an injected clock, a
// mailbox, an SMS gateway, a dialer), not canned responses.

type addIn struct {
	A float64 `json:"a" jsonschema:"First addend"`
	B float64 `json:"b" jsonschema:"Second addend"`
}

type ringIn struct {
	DoorbellID string `json:"doorbell_id" jsonschema:"Which doorbell to ring"`
}

type timestampOut struct {
	Timestamp string `json:"timestamp"`
}

type email struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	Snippet string `json:"snippet"`
}

type emailsIn struct {
	Limit int `json:"limit,omitempty" jsonschema:"How many emails to return" default:"10"`
}

type emailsOut struct {
	Emails []email `json:"emails"`
}

type smsIn struct {
	PhoneNumber string `json:"phone_number" jsonschema:"Recipient in E.164 form"`
	Message     string `json:"message" jsonschema:"Text to send"`
}

type smsOut struct {
	Status string `json:"status"`
}

type forecastIn struct {
	City string `json:"city" jsonschema:"City to forecast"`
}

// seedEnv is what the seed tools act on.
type seedEnv struct {
	mu       sync.Mutex // guards sent and rung
	clock    func() time.Time
	mailbox  []email
	sent     []smsIn
	doorbell []string // known doorbell ids
	rung     []string
	apiHost  string
	dial     func(ctx context.Context) error
}

// newSeedServer registers the seed tools on a fresh server.
func newSeedServer(t *testing.T, env *seedEnv) *server.Server {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "seed-004", Version: "1.0.0"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(server.AddTool(s, &mcp.Tool{Name: "Calculator.Add", Description: "Adds two numbers"},
		func(ctx context.Context, _ *server.CallRequest, in addIn) (float64, error) {
			return in.A + in.B, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "Doorbell.Ring", Description: "Rings a doorbell; returns nothing"},
		func(ctx context.Context, _ *server.CallRequest, in ringIn) (*mcp.CallToolResult, error) {
			for _, id := range env.doorbell {
				if id == in.DoorbellID {
					env.mu.Lock()
					env.rung = append(env.rung, id)
					env.mu.Unlock()
					return &mcp.CallToolResult{}, nil // no output
				}
			}
			return nil, &server.RetryableError{
				Message: "Doorbell ID not found",
				RetryGuidance: mcp.RetryGuidance{
					DeveloperMessage:        fmt.Sprintf("The doorbell with ID '%s' does not exist.", in.DoorbellID),
					CanRetry:                true,
					RetryAfterMs:            500,
					AdditionalPromptContent: "ids: " + strings.Join(env.doorbell, ","),
				},
			}
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "System.GetTimestamp", Description: "Returns the current system time"},
		func(ctx context.Context, _ *server.CallRequest, _ struct{}) (timestampOut, error) {
			return timestampOut{env.clock().UTC().Format(time.RFC3339)}, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "Gmail.GetEmails", Description: "Lists the newest emails"},
		func(ctx context.Context, _ *server.CallRequest, in emailsIn) (emailsOut, error) {
			n := min(in.Limit, len(env.mailbox))
			return emailsOut{Emails: env.mailbox[:n]}, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "SMS.Send", Description: "Sends a text message"},
		func(ctx context.Context, _ *server.CallRequest, in smsIn) (smsOut, error) {
			env.mu.Lock()
			env.sent = append(env.sent, in)
			env.mu.Unlock()
			return smsOut{Status: "sent"}, nil
		}))
	must(server.AddTool(s, &mcp.Tool{Name: "Weather.GetForecast", Description: "Fetches a forecast from the weather API"},
		func(ctx context.Context, _ *server.CallRequest, in forecastIn) (string, error) {
			err := env.dial(ctx)
			if errors.Is(err, syscall.ECONNREFUSED) {
				return "", &server.RetryableError{
					Message:       "Could not reach the server. Please try again later.",
					RetryGuidance: mcp.RetryGuidance{DeveloperMessage: fmt.Sprintf("The host %s is not reachable (ECONNREFUSED)", env.apiHost)},
					Err:           err,
				}
			}
			if err != nil {
				return "", err
			}
			return "sunny in " + in.City, nil
		}))
	return s
}

// refusingDialer dials a 127.0.0.1 port nothing listens on: a real
// ECONNREFUSED.
func refusingDialer(t *testing.T) func(ctx context.Context) error {
	t.Helper()
	addr := testenv.FreeAddr(t)
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
}

func defaultSeedEnv(t *testing.T) *seedEnv {
	return &seedEnv{
		clock: func() time.Time { return time.Date(2023, 10, 5, 12, 0, 0, 0, time.UTC) },
		mailbox: []email{
			{ID: "email_1", Subject: "Welcome to Gmail", Snippet: "Hello, welcome to your inbox!"},
			{ID: "email_2", Subject: "Your Receipt", Snippet: "Thank you for your purchase..."},
		},
		doorbell: []string{"doorbell42", "doorbell84"},
		apiHost:  "api.example.com",
		dial:     refusingDialer(t),
	}
}

func (e *seedEnv) sentCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.sent)
}
