package client_test

import (
	"context"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/mcp"
	"github.com/toolwire/toolwire/server"
	"github.com/toolwire/toolwire/transport/memory"
)

// Done is closed, and Err set, when the connection ends: the server's end
// going away, or Close.
func TestDoneWhenConnectionEnds(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "done", Version: "1"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(context.Background(), &client.Conn{Conn: memory.Serve(ctx, s)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
		t.Fatal("Done closed on a live connection")
	default:
	}
	if c.Err() != nil {
		t.Fatalf("Err = %v on a live connection", c.Err())
	}
	cancel() // the server's session ends and closes its end
	<-c.Done()
	if client.CodeOf(c.Err()) != client.CodeTransport {
		t.Fatalf("Err = %v", c.Err())
	}

	c2, err := client.Connect(context.Background(), &client.Conn{Conn: memory.Serve(context.Background(), s)})
	if err != nil {
		t.Fatal(err)
	}
	_ = c2.Close()
	<-c2.Done()
	if c2.Err() == nil {
		t.Fatal("no Err after Close")
	}
}
