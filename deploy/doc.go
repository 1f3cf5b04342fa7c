// Package deploy holds no code: it is where the packaging of the gateway
// lives — the systemd unit (systemd/minimal.service) and the Kubernetes
// manifests (kubernetes/*.yaml); the Dockerfile is at the repository root.
// Its test checks that the manifests parse, reference each other
// consistently and pass only flags that `minimal serve` has.
//
// deploy imports nothing.
package deploy
