package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
)

func TestParseArgsTypedBySchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"number"},"n":{"type":"integer"},"ok":{"type":"boolean"},"s":{"type":"string"},
		"tags":{"type":"array"},"maybe":{"type":["integer","null"]},"either":{"anyOf":[{"type":"boolean"},{"type":"string"}]}}}`)
	got, err := parseArgs([]string{"a=7.5", "n=-3", "ok=true", "s=42", "tags=[1,2]", "maybe=null", "either=yes", "free=1", "raw:={\"x\":1}"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":7.5,"either":"yes","free":"1","maybe":null,"n":-3,"ok":true,"raw":{"x":1},"s":"42","tags":[1,2]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range [][]string{{"n=1.5"}, {"ok=maybe"}, {"tags=[1,"}, {"nokey"}, {"=v"}, {"a=1", "a=2"}} {
		if _, err := parseArgs(bad, schema); err == nil {
			t.Errorf("%q accepted", bad)
		} else if _, ok := err.(usageError); !ok {
			t.Errorf("%q: %T is not a usage error", bad, err)
		}
	}
}

func TestParseJSONArgPointsAtTypo(t *testing.T) {
	_, err := parseArgs([]string{"{\"a\": 1,\n \"b\": tru}"}, nil)
	if err == nil || !strings.Contains(err.Error(), "line 2, column 10") || !strings.HasSuffix(err.Error(), "\n   \"b\": tru}\n           ^") {
		t.Fatalf("err = %q", err)
	}
	got, err := parseArgs([]string{` { "a" : [1, 2] } `}, nil)
	if err != nil || string(got) != `{"a":[1,2]}` {
		t.Fatalf("got %s, %v", got, err)
	}
	// Arguments are read as the server will read them: a member named
	// twice is refused, pointed at, rather than sent for the server to
	// pick one; so is invalid UTF-8 and anything after the value.
	for arg, want := range map[string]string{
		`{"a": 1, "a": 2}`:        "line 1, column 10: duplicate member name \"a\"",
		`{"a": {"b": 1, "b": 2}}`: "line 1, column 16: duplicate member name \"b\"",
		"{\"a\": \"\xff\"}":       "invalid UTF-8",
		`{"a": 1} {"b": 2}`:       "line 1, column 10: unexpected data after the JSON value",
	} {
		if _, err := parseArgs([]string{arg}, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", arg, err, want)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var b strings.Builder
	bar := &progressBar{w: &b}
	bar.update(client.Progress{Progress: 1, Total: 4, Message: "step 1 of 4"})
	bar.update(client.Progress{Progress: 7})
	bar.clear()
	want := "\r\033[K[#######.......................]  25% step 1 of 4" + "\r\033[K[progress 7]" + "\r\033[K"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}
