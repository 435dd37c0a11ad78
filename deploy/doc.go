// Package deploy holds the gateway's deployment files (the Helm chart, the
// systemd unit, the Compose topology) and the tests of the rendered chart.
// It is a module of its own so that the root module does not depend on
// Helm.
package deploy
