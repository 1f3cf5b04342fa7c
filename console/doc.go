// Package console serves the web console of the gateway at Prefix on the
// REST listener: static pages (HTML, CSS and JavaScript embedded in the
// binary, no third-party request) that sign in with a token and do
// everything through the admin and Auto APIs with it, so the console shows
// and does exactly what the token may.
//
// Sign-in takes a pasted token, or a one-time code printed by
// `minimal console-link` (NewCode): the page exchanges the code, in the
// body of a POST, for a short-lived token held in the page's memory only.
// A code is stored hashed in the control-plane store, is taken once and
// expires after CodeTTL; every server of the control plane can take it.
//
// Every answer carries a Content-Security-Policy without 'unsafe-inline'
// (scripts and styles come from files), frame-ancestors 'none' and
// X-Content-Type-Options: nosniff. See docs/console.md.
package console
