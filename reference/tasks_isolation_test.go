package reference

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/oauthtest"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/streamable"
)

// authServer serves the reference server behind oauthtest.NamedBearer:
// "Bearer NAME" makes NAME the principal; no header leaves it anonymous.
func authServer(t *testing.T) string {
	t.Helper()
	s := server.New(Info())
	if err := Register(s); err != nil {
		t.Fatal(err)
	}
	h := streamable.NewHandler(s)
	hs := httptest.NewServer(oauthtest.NamedBearer(h))
	t.Cleanup(func() {
		hs.Close()
		h.Close()
		_ = s.Shutdown(context.Background())
	})
	return hs.URL + "/mcp"
}

// connectAs connects as the principal who ("" for anonymous).
func connectAs(t *testing.T, url string, era mcp.Era, who string) *client.Client {
	t.Helper()
	hdr := http.Header{}
	if who != "" {
		hdr.Set("Authorization", "Bearer "+who)
	}
	c, err := client.Connect(t.Context(), &client.HTTP{URL: url, Header: hdr}, client.WithEra(era))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// notFound checks that err is the server's -32602 and says nothing of the
// task beyond what the caller sent: it is the error for a task id that
// never existed, with the id swapped.
func notFound(t *testing.T, op string, err error, id string, unknown *client.JSONRPCError, unknownID string) {
	t.Helper()
	var je *client.JSONRPCError
	if !errors.As(err, &je) {
		t.Errorf("%s: %v, want a JSON-RPC error", op, err)
		return
	}
	if je.Code != -32602 {
		t.Errorf("%s: code %d, want -32602", op, je.Code)
	}
	if got, want := strings.ReplaceAll(je.Message, id, "ID"), strings.ReplaceAll(unknown.Message, unknownID, "ID"); got != want {
		t.Errorf("%s: message %q differs from a missing task's %q", op, je.Message, unknown.Message)
	}
	if string(je.Data) != string(unknown.Data) {
		t.Errorf("%s: data %s differs from a missing task's %s", op, je.Data, unknown.Data)
	}
	for _, leak := range []string{"alice", "trigger-long-running-operation", "working", "step", "Long running"} {
		if strings.Contains(je.Message+string(je.Data), leak) {
			t.Errorf("%s: the error names %q: %v", op, leak, je)
		}
	}
}

// A task belongs to the principal that created it: another principal, or
// an anonymous caller, cannot tell it from a task that does not exist
// (tasks/get, tasks/cancel, tasks/result, tasks/update: -32602 saying
// nothing more; tasks/list does not list it), and the owner still sees it,
// from another 2025-era session too. Both eras.
func TestTaskPrincipalIsolation(t *testing.T) {
	url := authServer(t)
	const unknownID = "00000000000000000000000000000000"
	for _, era := range []mcp.Era{mcp.EraLegacy, mcp.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			alice := connectAs(t, url, era, "alice")
			st, err := alice.CallToolTask(t.Context(), "trigger-long-running-operation", map[string]any{"duration": 600, "steps": 1000})
			if err != nil || st.Task == nil {
				t.Fatalf("alice's task: %v %+v", err, st)
			}
			id := st.Task.TaskID

			for _, who := range []string{"bob", ""} {
				other := connectAs(t, url, era, who)
				_, err := other.GetTask(t.Context(), unknownID)
				var unknown *client.JSONRPCError
				if !errors.As(err, &unknown) || unknown.Code != -32602 {
					t.Fatalf("tasks/get of a task that never existed: %v", err)
				}
				_, err = other.GetTask(t.Context(), id)
				notFound(t, who+": tasks/get", err, id, unknown, unknownID)
				err = other.CancelTask(t.Context(), id)
				notFound(t, who+": tasks/cancel", err, id, unknown, unknownID)
				if era == mcp.EraLegacy {
					_, err = other.WaitTask(t.Context(), id) // tasks/result
					notFound(t, who+": tasks/result", err, id, unknown, unknownID)
					tasks, err := other.ListTasks(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					for _, task := range tasks {
						if task.TaskID == id {
							t.Errorf("%s: tasks/list lists alice's task", who)
						}
					}
				} else {
					err = other.UpdateTask(t.Context(), id, mcp.InputResponses{"x": []byte(`{}`)})
					notFound(t, who+": tasks/update", err, id, unknown, unknownID)
				}
			}

			// Nothing another principal did touched the task; alice sees it,
			// from a new session too, and can cancel it.
			again := connectAs(t, url, era, "alice")
			for _, c := range []*client.Client{alice, again} {
				d, err := c.GetTask(t.Context(), id)
				if err != nil {
					t.Fatalf("alice: tasks/get: %v", err)
				}
				if d.Status != mcp.TaskWorking {
					t.Errorf("alice's task is %s, want still working", d.Status)
				}
			}
			if era == mcp.EraLegacy {
				tasks, err := again.ListTasks(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if len(tasks) == 0 || !containsTask(tasks, id) {
					t.Errorf("alice's tasks/list %+v lacks her task", tasks)
				}
			}
			if err := again.CancelTask(t.Context(), id); err != nil {
				t.Fatalf("alice: tasks/cancel: %v", err)
			}
			if d, err := alice.GetTask(t.Context(), id); err != nil || d.Status != mcp.TaskCancelled {
				t.Errorf("alice's task after her tasks/cancel: %v %+v", err, d)
			}
		})
	}
}

func containsTask(tasks []mcp.Task, id string) bool {
	for _, task := range tasks {
		if task.TaskID == id {
			return true
		}
	}
	return false
}
