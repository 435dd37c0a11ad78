package flow_test

import "testing"

// TestCheckConnectStructured: with WithConnect, a call's structuredContent
// is typed from its tool's outputSchema: a declared property checks, a
// misspelt one is a diagnostic at its place with the property it meant;
// without the servers it stays dyn.
func TestCheckConnectStructured(t *testing.T) {
	ts := newTestServer(t)
	f := parse(t, header+`steps:
  - name: sum
    call: {tool: add, arguments: {a: 1, b: 2}}
  - assert: {that: "${{ steps.sum.result.structuredContent.sum + 1 }}", equals: 4}
  - value: "${{ steps.sum.result.structuredContent.summ }}"
`)
	got := checkConnected(t, ts, f, 1)
	containsAll(t, got, `test.flow.yaml:7:52: unknown field "summ" on the structuredContent of sum (its tool's outputSchema) (did you mean "sum"?)`)
}
