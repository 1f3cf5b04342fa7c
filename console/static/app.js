// Minimal console. Plain JavaScript, no dependency, no third-party request.
// The token lives in this variable only: never in a URL, a cookie or storage.
// Every call goes to the gateway's own admin and Auto APIs with that token in
// a header, so the console shows and does exactly what the token may.
"use strict";

const AUTO = "/minimal/api/rest/auto/v1";
const ADMIN = "/minimal/api/admin/v1";
const EXCHANGE = "/minimal/console/exchange";

const state = { token: "", org: "", project: "", identity: "", roles: [], keyType: "", expiresAt: "", timer: 0 };

// ---------------------------------------------------------------- DOM helpers

// el builds an element: attrs sets properties (on*, for events) and
// attributes; children are nodes or text (never parsed as HTML).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else if (k === "value") e.value = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function field(label, input, wide) {
  return el("label", { class: wide ? "wide" : undefined }, label, input);
}

function errorBox(err) {
  const box = el("div", { class: "error", role: "alert" });
  if (err instanceof ApiError) {
    box.append(el("strong", {}, `${err.status} ${err.code || ""}`.trim()), ": ", err.message);
  } else {
    box.append(String(err && err.message ? err.message : err));
  }
  return box;
}

function empty(text) {
  return el("p", { class: "empty" }, text);
}

// show replaces the content of a container with nodes.
function show(container, ...nodes) {
  container.replaceChildren(...nodes.flat().filter(Boolean));
}

function cell(v) {
  if (v === null || v === undefined) return el("td", { class: "note" }, "null");
  if (typeof v === "number") return el("td", { class: "num" }, String(v));
  if (typeof v === "object") return el("td", {}, el("code", {}, JSON.stringify(v)));
  return el("td", {}, String(v));
}

// table renders rows (objects) with the given columns; actions, when given,
// adds a last cell of buttons for each row.
function table(columns, rows, actions, caption) {
  if (!rows || rows.length === 0) return null;
  const head = el("tr", {}, columns.map((c) => el("th", { scope: "col" }, c)), actions ? el("th", { scope: "col" }, "Actions") : null);
  const body = rows.map((r) => el("tr", {}, columns.map((c) => cell(r[c])), actions ? el("td", {}, actions(r)) : null));
  return el("div", { class: "scroll" }, el("table", {}, caption ? el("caption", { class: "note" }, caption) : null, el("thead", {}, head), el("tbody", {}, body)));
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api calls the gateway with the token in a header (never a cookie) and
// returns {status, data, text, type}; an error answer throws ApiError with
// the gateway's own code and message.
async function api(method, path, body) {
  const headers = { "LB-Access-Token": state.token, Accept: "application/json" };
  const opts = { method, headers, credentials: "omit", cache: "no-store", redirect: "error", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const text = await r.text();
  const type = r.headers.get("Content-Type") || "";
  let data = null;
  if (type.startsWith("application/json")) {
    try { data = JSON.parse(text); } catch (_) { data = null; }
  }
  if (!r.ok) {
    const e = data && data.error;
    if (r.status === 401 && state.token) expireSoon();
    throw new ApiError(r.status, e ? e.code : r.statusText, e ? e.message : text.trim() || r.statusText);
  }
  return { status: r.status, data, text, type };
}

const enc = encodeURIComponent;
function projectPath() { return `${ADMIN}/orgs/${enc(state.org)}/projects/${enc(state.project)}`; }
function autoPath() { return `${AUTO}/${enc(state.org)}/${enc(state.project)}`; }

// ---------------------------------------------------------------- sign-in

function decodeClaims(token) {
  const part = token.split(".")[1];
  if (!part) throw new Error("this is not a token (three parts separated by dots)");
  const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
  return JSON.parse(json);
}

function signedIn(info) {
  Object.assign(state, info);
  const page = document.getElementById("page");
  document.getElementById("nav").hidden = false;
  document.getElementById("who").hidden = false;
  document.getElementById("who-text").textContent =
    `${state.identity} · ${state.org}/${state.project} · roles [${state.roles.join(", ")}] · ${state.keyType}` +
    (state.expiresAt ? ` · until ${new Date(state.expiresAt).toLocaleTimeString()}` : "");
  if (state.expiresAt) {
    clearTimeout(state.timer);
    const left = new Date(state.expiresAt).getTime() - Date.now();
    if (left > 0) state.timer = setTimeout(() => signOut("The console's token has expired: sign in again."), Math.min(left, 2147483000));
  }
  page.replaceChildren();
  route();
}

function expireSoon() {
  // A 401 means the token no longer works (expired, revoked, identity
  // disabled): the page that got it shows the message; the header says so.
  document.getElementById("who-text").textContent += " · token refused";
}

function signOut(message) {
  clearTimeout(state.timer);
  Object.assign(state, { token: "", org: "", project: "", identity: "", roles: [], keyType: "", expiresAt: "" });
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  renderSignIn(message);
}

function renderSignIn(message, err) {
  const page = document.getElementById("page");
  const input = el("input", { id: "token", type: "password", autocomplete: "off", spellcheck: "false", required: true, "aria-describedby": "token-help" });
  const out = el("div", { "aria-live": "polite" });
  const form = el("form", {
    class: "panel signin",
    onsubmit: async (ev) => {
      ev.preventDefault();
      const token = input.value.trim();
      input.value = "";
      try {
        const c = decodeClaims(token);
        // The gateway checks the token before the console uses it: its
        // answer (401 and why) is shown as it is.
        state.token = token;
        await api("GET", `${AUTO}/${enc(c.org)}/${enc(c.project)}`);
        signedIn({ token, org: c.org, project: c.project, identity: c.identity, roles: c.roles || [], keyType: c.key_type || "", expiresAt: c.exp ? new Date(c.exp * 1000).toISOString() : "" });
      } catch (e) {
        state.token = "";
        show(out, errorBox(e));
        input.focus();
      }
    },
  },
  el("h1", {}, "Sign in"),
  message ? el("p", { class: "note", role: "status" }, message) : null,
  err ? errorBox(err) : null,
  field("Access token", input, true),
  el("p", { id: "token-help", class: "note" },
    "Paste a token, or run ", el("code", {}, "minimal console-link --identity NAME"),
    " and open the link it prints: its one-time code signs you in with a short-lived token. The token stays in this page's memory; reloading the page signs you out."),
  el("button", { type: "submit" }, "Sign in"),
  out);
  show(page, form);
  input.focus();
}

// exchangeCode trades a one-time code (from the URL's fragment, removed
// at once) for a token, in the body of a POST.
async function exchangeCode(code) {
  const page = document.getElementById("page");
  show(page, el("p", { role: "status" }, "Signing in…"));
  try {
    const r = await fetch(EXCHANGE, {
      method: "POST", credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code }),
    });
    const data = await r.json().catch(() => null);
    if (!r.ok) {
      const e = data && data.error;
      throw new ApiError(r.status, e ? e.code : r.statusText, e ? e.message : r.statusText);
    }
    signedIn({ token: data.token, org: data.org, project: data.project, identity: data.identity, roles: data.roles || [], keyType: data.key_type, expiresAt: data.expires_at });
  } catch (e) {
    renderSignIn("The sign-in link did not work.", e);
  }
}

// ---------------------------------------------------------------- routing

const pages = { databases: pageDatabases, browse: pageBrowse, policy: pagePolicy, sessions: pageSessions, audit: pageAudit, metrics: pageMetrics };
let leave = null;

function route() {
  if (!state.token) return;
  if (leave) { leave(); leave = null; }
  const [name, ...rest] = (location.hash.slice(1) || "databases").split("/");
  const render = pages[name] || pageDatabases;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.page === (pages[name] ? name : "databases")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const page = document.getElementById("page");
  page.replaceChildren();
  const stop = render(page, rest.map(decodeURIComponent));
  if (typeof stop === "function") leave = stop;
  const h = page.querySelector("h1");
  if (h) { h.tabIndex = -1; h.focus({ preventScroll: true }); }
}

// ---------------------------------------------------------------- databases

function pageDatabases(page) {
  const list = el("div", { "aria-live": "polite" });
  const detail = el("div", { "aria-live": "polite" });
  const result = el("div", { "aria-live": "polite" });

  async function load() {
    show(list, el("p", { class: "note" }, "Loading…"));
    try {
      const r = await api("GET", `${projectPath()}/databases`);
      const dbs = r.data.data;
      show(list, table(["type", "schema", "created_at", "updated_at"], dbs, (d) => [
        el("button", { type: "button", class: "quiet", onclick: () => tables(d.type, d.schema) }, "Tables"), " ",
        el("button", { type: "button", class: "quiet", onclick: () => test(d.type, d.schema) }, "Test"), " ",
        el("button", { type: "button", class: "quiet", onclick: () => reload(d.type, d.schema) }, "Reload tables"), " ",
        el("button", { type: "button", class: "danger", onclick: () => remove(d.type, d.schema) }, "Remove"),
      ], "Registered databases") || empty("No database is registered in this project yet: register one below."));
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) return loadVisible(e);
      show(list, errorBox(e));
    }
  }

  // A token without the admin role sees the databases where it sees a table.
  async function loadVisible(refusal) {
    try {
      const r = await api("GET", autoPath());
      show(list, el("p", { class: "note" }, "The admin API refused this token (", refusal.message, "); these are the databases it can read:"),
        table(["type", "schema"], r.data.data, (d) => el("button", { type: "button", class: "quiet", onclick: () => tables(d.type, d.schema) }, "Tables"))
        || empty("This token sees no table in any database."));
    } catch (e) {
      show(list, errorBox(e));
    }
  }

  // tables lists a database's tables; wait, when set, retries a 404 for a
  // few seconds: a database registered a moment ago reaches the catalog of
  // every server within about two seconds.
  async function tables(type, schema, wait) {
    show(detail, el("p", { class: "note" }, "Loading…"));
    try {
      let r;
      for (let tries = wait ? 8 : 1; ; tries--) {
        try {
          r = await api("GET", `${autoPath()}/${enc(type)}/${enc(schema)}`);
          break;
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 404 || tries <= 1) throw e;
          await new Promise((ok) => setTimeout(ok, 500));
        }
      }
      const rows = r.data.data.map((t) => ({ table: t.table, actions: t.actions.join(", ") }));
      show(detail, el("h2", {}, `Tables of ${type}/${schema}`),
        table(["table", "actions"], rows, (t) => [
          el("button", { type: "button", class: "quiet", onclick: () => columns(type, schema, t.table) }, "Columns"), " ",
          el("a", { href: `#browse/${enc(type)}/${enc(schema)}/${enc(t.table)}` }, "Browse"),
        ]) || empty("This token sees no table in this database."));
    } catch (e) {
      show(detail, errorBox(e));
    }
  }

  async function columns(type, schema, name) {
    try {
      const r = await api("GET", `${autoPath()}/${enc(type)}/${enc(schema)}/${enc(name)}/_describe`);
      const d = r.data;
      const cols = d.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable, primary_key: c.primary_key, default: c.default, actions: c.actions.join(", ") }));
      show(detail, el("h2", {}, `Columns of ${type}/${schema}/${name}`),
        el("p", { class: "note" }, `Your actions: ${d.actions.join(", ") || "none"}. `, d.row_scoped.length ? `Rows limited by a row scope for: ${d.row_scoped.join(", ")}.` : "No row scope."),
        table(["name", "type", "nullable", "primary_key", "default", "actions"], cols) || empty("No column is granted."));
    } catch (e) {
      show(detail, errorBox(e));
    }
  }

  async function test(type, schema) {
    try {
      const r = await api("POST", `${projectPath()}/databases/${enc(type)}/${enc(schema)}/test`);
      show(result, el("p", { class: "ok", role: "status" }, `Connection test of ${type}/${schema}: ${r.data.status}`, r.data.warning ? ` (${r.data.warning})` : ""));
    } catch (e) {
      show(result, errorBox(e));
    }
  }

  // reload has every server read the database's tables again now (after a
  // migration), as `minimal db reload` does.
  async function reload(type, schema) {
    try {
      const r = await api("POST", `${projectPath()}/databases/${enc(type)}/${enc(schema)}/reload`);
      show(result, el("p", { class: "ok", role: "status" }, `Reloaded ${type}/${schema}: ${r.data.tables} table${r.data.tables === 1 ? "" : "s"}.`, r.data.warning ? ` ${r.data.warning}` : ""));
      tables(type, schema);
    } catch (e) {
      show(result, errorBox(e));
    }
  }

  async function remove(type, schema) {
    if (!confirm(`Unregister ${type}/${schema}? Its tables stop being served within seconds.`)) return;
    try {
      await api("DELETE", `${projectPath()}/databases/${enc(type)}/${enc(schema)}`);
      show(result, el("p", { class: "ok", role: "status" }, `Removed ${type}/${schema}.`));
      show(detail);
      load();
    } catch (e) {
      show(result, errorBox(e));
    }
  }

  const type = el("select", { id: "db-type" }, ["pg", "ma", "ch", "ms", "mi"].map((t) => el("option", { value: t }, t)));
  const schema = el("input", { id: "db-schema", required: true, autocomplete: "off" });
  const dsn = el("input", { id: "db-dsn", type: "password", required: true, autocomplete: "off", "aria-describedby": "dsn-help" });
  const form = el("form", {
    class: "row",
    onsubmit: async (ev) => {
      ev.preventDefault();
      show(result, el("p", { class: "note", role: "status" }, "Testing the connection…"));
      try {
        const r = await api("POST", `${projectPath()}/databases`, { type: type.value, schema: schema.value.trim(), dsn: dsn.value });
        dsn.value = "";
        show(result, el("p", { class: "ok", role: "status" }, `Registered ${r.data.type}/${r.data.schema} after a connection test.`));
        load();
        tables(r.data.type, r.data.schema, true);
      } catch (e) {
        show(result, errorBox(e));
      }
    },
  }, field("Type", type), field("Schema", schema), field("Connection string (DSN)", dsn, true), el("button", { type: "submit", id: "db-register" }, "Test and register"));

  show(page,
    el("div", { class: "row" }, el("h1", {}, "Databases"), el("button", { type: "button", class: "quiet", onclick: load }, "Reload")),
    list,
    el("section", { class: "panel", "aria-labelledby": "reg-h" }, el("h2", { id: "reg-h" }, "Register a database"), form,
      el("p", { id: "dsn-help", class: "note" }, "The connection is tested before anything is stored; the DSN is sealed at rest and never shown again."), result),
    detail);
  load();
}

// ---------------------------------------------------------------- table browser

function pageBrowse(page, args) {
  const pick = el("select", { id: "browse-table", "aria-label": "Table" }, el("option", { value: "" }, "Choose a table…"));
  const filters = el("textarea", { id: "browse-filters", rows: 2, placeholder: "department_id=eq.6&full_name=like.A*", "aria-describedby": "filter-help" });
  const order = el("input", { id: "browse-order", placeholder: "id.as", autocomplete: "off" });
  const fields = el("input", { id: "browse-fields", placeholder: "id,full_name", autocomplete: "off" });
  const size = el("input", { id: "browse-size", type: "number", min: 1, value: 25 });
  const pg = el("input", { id: "browse-page", type: "number", min: 0, value: 0 });
  const format = el("select", { id: "browse-format" }, ["json", "csv", "tsv", "yaml", "xml"].map((f) => el("option", { value: f }, f)));
  const info = el("div", { "aria-live": "polite" });
  const out = el("div", { id: "browse-out", "aria-live": "polite" });

  async function loadTables() {
    try {
      const r = await api("GET", autoPath());
      for (const db of r.data.data) {
        if (db.error) continue;
        for (const t of db.tables) {
          const v = `${db.type}/${db.schema}/${t.table}`;
          pick.append(el("option", { value: v }, v));
        }
      }
      if (pick.options.length === 1) show(info, empty("This token sees no table."));
      if (args.length === 3) {
        pick.value = args.join("/");
        describe();
      }
    } catch (e) {
      show(info, errorBox(e));
    }
  }

  function target() {
    const [t, s, n] = pick.value.split("/");
    return `${autoPath()}/${enc(t)}/${enc(s)}/${enc(n)}`;
  }

  async function describe() {
    if (!pick.value) return;
    try {
      const d = (await api("GET", `${target()}/_describe`)).data;
      const readable = d.columns.filter((c) => c.actions.includes("read")).map((c) => c.name);
      show(info, el("p", { class: "note", id: "browse-limits" },
        `You may read ${readable.length} column${readable.length === 1 ? "" : "s"}: ${readable.join(", ") || "none"}. `,
        d.row_scoped.includes("read") ? "Rows are limited by a row scope of your roles: you see only the rows it allows." : "No row scope limits your reads."));
    } catch (e) {
      show(info, errorBox(e));
    }
  }

  async function run() {
    if (!pick.value) { show(out, empty("Choose a table first.")); return; }
    const q = new URLSearchParams(filters.value.trim().replace(/\n/g, "&"));
    q.set("ps", size.value || "25");
    q.set("pg", pg.value || "0");
    if (order.value.trim()) q.set("oy", order.value.trim());
    if (fields.value.trim()) q.set("fc", fields.value.trim());
    if (format.value !== "json") q.set("format", format.value);
    show(out, el("p", { class: "note" }, "Loading…"));
    try {
      const r = await api("GET", `${target()}?${q}`);
      if (format.value !== "json") {
        show(out, el("pre", {}, r.text || "(empty)"));
        return;
      }
      const rows = Array.isArray(r.data) ? r.data : (r.data && r.data.data) || [];
      const cols = rows.length ? Object.keys(rows[0]) : [];
      show(out, table(cols, rows, null, `Page ${pg.value} (${rows.length} row${rows.length === 1 ? "" : "s"})`) || empty("No row matches."));
    } catch (e) {
      show(out, errorBox(e));
    }
  }

  const form = el("form", {
    class: "row",
    onsubmit: (ev) => { ev.preventDefault(); run(); },
  },
  field("Table", pick),
  field("Filters", filters, true),
  field("Order (oy)", order), field("Columns (fc)", fields), field("Page size", size), field("Page", pg), field("Format", format),
  el("button", { type: "submit", id: "browse-run" }, "Run"),
  el("button", { type: "button", class: "quiet", onclick: () => { pg.value = Math.max(0, Number(pg.value) - 1); run(); } }, "Previous page"),
  el("button", { type: "button", class: "quiet", onclick: () => { pg.value = Number(pg.value) + 1; run(); } }, "Next page"));
  pick.addEventListener("change", () => { pg.value = 0; describe(); });

  show(page, el("h1", {}, "Tables"),
    el("section", { class: "panel" }, form,
      el("p", { id: "filter-help", class: "note" }, "Filters use the Auto API's grammar, one term a line or joined with &: column=op.value (eq, ne, gt, ge, lt, le, like, in, is…); see docs/rest.md.")),
    info, out);
  loadTables();
}

// ---------------------------------------------------------------- policy

function pagePolicy(page) {
  const sections = {
    identities: { cols: ["name", "space", "kind", "roles", "key_type", "enabled", "claims"], empty: "No identity." },
    roles: { cols: ["name", "builtin", "identities", "templates", "scopes"], empty: "No role." },
    templates: { cols: ["name", "rules", "version"], empty: "No template: only admin may act." },
    bindings: { cols: ["role", "templates", "version"], empty: "No binding." },
    locks: { cols: ["object", "mask", "version"], empty: "No lock." },
    scopes: { cols: ["role", "object", "filter", "version"], empty: "No row scope." },
  };
  const view = el("div", { id: "policy-view", "aria-live": "polite" });
  const tabs = el("div", { class: "tabs", role: "tablist", "aria-label": "Policy sections" });
  async function open(name, button) {
    for (const b of tabs.children) b.setAttribute("aria-selected", String(b === button));
    show(view, el("p", { class: "note" }, "Loading…"));
    try {
      const r = await api("GET", `${projectPath()}/${name}`);
      show(view, table(sections[name].cols, r.data.data) || empty(sections[name].empty));
    } catch (e) {
      show(view, errorBox(e));
    }
  }
  for (const name of Object.keys(sections)) {
    const b = el("button", { type: "button", class: "quiet", role: "tab", "aria-selected": "false", id: `tab-${name}` }, name[0].toUpperCase() + name.slice(1));
    b.addEventListener("click", () => open(name, b));
    tabs.append(b);
  }

  const who = el("input", { id: "explain-identity", required: true, autocomplete: "off" });
  const method = el("select", { id: "explain-method" }, ["GET", "POST", "PUT", "DELETE"].map((m) => el("option", { value: m }, m)));
  const path = el("input", { id: "explain-path", required: true, value: `${autoPath()}/`, autocomplete: "off" });
  const body = el("textarea", { id: "explain-body", rows: 2, placeholder: '{"title": "…"} for POST or PUT' });
  const result = el("div", { id: "explain-out", "aria-live": "polite" });
  const form = el("form", {
    class: "row",
    onsubmit: async (ev) => {
      ev.preventDefault();
      const q = new URLSearchParams({ identity: who.value.trim(), method: method.value, path: path.value.trim() });
      if (body.value.trim()) q.set("body", body.value.trim());
      try {
        const x = (await api("GET", `${projectPath()}/explain?${q}`)).data;
        const gates = x.gates.map((g) => ({ gate: g.name, decision: g.decision, detail: g.detail }));
        show(result,
          el("p", {}, `${x.identity} (roles [${x.roles.join(", ")}], key_type ${x.key_type}): ${x.action} on ${x.object}`),
          el("div", { class: "scroll" }, el("table", {}, el("thead", {}, el("tr", {}, ["Gate", "Decision", "Detail"].map((h) => el("th", { scope: "col" }, h)))),
            el("tbody", {}, gates.map((g) => el("tr", {}, el("td", {}, g.gate), el("td", {}, el("span", { class: `badge ${g.decision}` }, g.decision)), el("td", {}, g.detail)))))),
          x.outcome.allowed || x.columns !== null ? el("p", {}, "Columns: ", x.columns === null ? "every column" : x.columns.join(", ") || "none") : null,
          x.sql ? el("pre", {}, x.sql + (x.args && x.args.length ? `\n-- args: ${x.args.join(", ")}` : "")) : null,
          x.outcome.allowed ? el("p", { class: "ok" }, "Allowed (nothing was run).")
            : el("p", { class: "error", id: "explain-refusal" }, el("strong", {}, x.outcome.code), ": ", x.outcome.message));
      } catch (e) {
        show(result, errorBox(e));
      }
    },
  }, field("Identity", who), field("Method", method), field("Path", path, true), field("Body", body, true), el("button", { type: "submit", id: "explain-run" }, "Explain"));

  show(page, el("h1", {}, "Policy"), tabs, view,
    el("section", { class: "panel", "aria-labelledby": "explain-h" }, el("h2", { id: "explain-h" }, "Explain a request"),
      el("p", { class: "note" }, "How a request of an identity would fare: each gate's decision, the columns and the SQL. Nothing runs."), form, result));
  open("identities", tabs.children[0]);
}

// ---------------------------------------------------------------- AI sessions

function pageSessions(page, args) {
  const id = el("input", { id: "session-id", required: true, autocomplete: "off", value: args[0] || "" });
  const out = el("div", { id: "session-out", "aria-live": "polite" });
  async function load() {
    try {
      const j = (await api("GET", `${ADMIN}/sessions/${enc(id.value.trim())}/journal`)).data;
      const s = j.session;
      const calls = j.calls.map((c) => ({ seq: c.seq, tool: c.tool, arguments: c.arguments, started_at: c.started_at, outcome: c.outcome, message: c.message, rows: c.rows, duration_ms: c.duration_ms }));
      show(out,
        el("div", { class: "panel" }, el("h2", {}, `Session ${s.name || s.id}`),
          el("p", {}, `Identity ${s.identity} · ${s.state} · started ${s.started_at} · last seen ${s.last_seen_at}`),
          s.context ? el("p", { class: "note" }, s.context) : null),
        table(["seq", "tool", "arguments", "started_at", "outcome", "message", "rows", "duration_ms"], calls, null, "Journal") || empty("No call is journaled in this session yet."));
    } catch (e) {
      show(out, errorBox(e));
    }
  }
  const list = el("div", { id: "session-list", "aria-live": "polite" });
  async function loadList() {
    try {
      const rows = (await api("GET", `${ADMIN}/sessions?limit=50`)).data.data;
      show(list, table(["name", "identity", "state", "started_at", "last_seen_at", "context"], rows, (r) =>
        el("button", { type: "button", class: "quiet", onclick: () => { id.value = r.id; load(); } }, "Journal"), "The project's AI sessions, newest first")
        || empty("No AI session yet: agents start one with their first MCP tool call that names it."));
    } catch (e) {
      show(list, errorBox(e));
    }
  }
  const form = el("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); load(); } },
    field("Session id", id, true), el("button", { type: "submit", id: "session-open" }, "Open journal"));
  show(page, el("h1", {}, "AI sessions"), list,
    el("section", { class: "panel" }, form), out);
  loadList();
  if (args[0]) load();
}

// ---------------------------------------------------------------- audit log

function pageAudit(page) {
  const inputs = {};
  for (const name of ["identity", "object", "action", "outcome", "since", "until"]) {
    inputs[name] = el("input", { id: `audit-${name}`, autocomplete: "off", placeholder: { outcome: "ok, error or a code", since: "2026-01-01T00:00:00Z", until: "RFC 3339", action: "read, create…", object: "pg/public/employees" }[name] });
  }
  const limit = el("input", { id: "audit-limit", type: "number", min: 1, max: 1000, value: 50 });
  const out = el("div", { id: "audit-out", "aria-live": "polite" });
  let last = "";
  async function load(before) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(inputs)) if (v.value.trim()) q.set(k, v.value.trim());
    q.set("limit", limit.value || "50");
    if (before) q.set("before", before);
    try {
      const rows = (await api("GET", `${projectPath()}/audit?${q}`)).data.data;
      last = rows.length ? rows[rows.length - 1].id : "";
      show(out, table(["at", "identity", "roles", "face", "object", "action", "rows", "outcome", "message", "request_id", "duration_ms"], rows, null, before ? "Older entries" : "Newest first")
        || empty(before ? "No older entry." : "No entry matches these filters."),
      rows.length ? el("button", { type: "button", class: "quiet", onclick: () => load(last) }, "Older") : null);
    } catch (e) {
      show(out, errorBox(e));
    }
  }
  const form = el("form", { class: "row", onsubmit: (ev) => { ev.preventDefault(); load(); } },
    Object.entries(inputs).map(([k, v]) => field(k[0].toUpperCase() + k.slice(1), v)), field("Limit", limit),
    el("button", { type: "submit", id: "audit-run" }, "Search"));
  show(page, el("h1", {}, "Audit log"), el("section", { class: "panel" }, form), out);
  load();
}

// ---------------------------------------------------------------- metrics

// parseMetrics reads the Prometheus text format: name -> [{labels, value}].
function parseMetrics(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    (out[m[1]] = out[m[1]] || []).push({ labels, value: Number(m[4]) });
  }
  return out;
}

function sum(ms, name, keep) {
  return (ms[name] || []).filter((s) => !keep || keep(s.labels)).reduce((a, s) => a + s.value, 0);
}

function drawChart(canvas, points, unit) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 300, h = canvas.clientHeight || 120;
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  const g = canvas.getContext("2d");
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  g.strokeStyle = "#d6d6dc";
  g.strokeRect(0.5, 0.5, w - 1, h - 1);
  if (points.length < 2) return;
  const max = Math.max(...points, 1e-9);
  g.fillStyle = "#5d5d66";
  g.font = "11px system-ui, sans-serif";
  g.fillText(`max ${fmt(max)}${unit}`, 6, 13);
  g.strokeStyle = "#1f5fbf";
  g.lineWidth = 2;
  g.beginPath();
  points.forEach((v, i) => {
    const x = 4 + (i * (w - 8)) / (points.length - 1);
    const y = h - 4 - (v / max) * (h - 22);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
}

function fmt(v) {
  return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(3);
}

function pageMetrics(page) {
  const defs = [
    { id: "requests", title: "Requests", unit: "/s" },
    { id: "refusals", title: "Refusals by a permission gate", unit: "/s" },
    { id: "latency", title: "Mean latency", unit: " ms" },
    { id: "pool", title: "Pool use (acquired / max)", unit: " %" },
  ];
  const charts = {};
  const grid = el("div", { class: "charts" });
  for (const d of defs) {
    const value = el("div", { class: "value", id: `metric-${d.id}` }, "…");
    const canvas = el("canvas", { role: "img", "aria-label": `${d.title}, last two minutes` });
    charts[d.id] = { def: d, value, canvas, points: [] };
    grid.append(el("div", { class: "panel chart" }, el("h2", {}, d.title), value, canvas));
  }
  const note = el("div", { "aria-live": "polite" });
  let prev = null;
  let stopped = false;
  async function tick() {
    if (stopped) return;
    try {
      const r = await fetch("/metrics", { credentials: "omit", cache: "no-store" });
      if (!r.ok) throw new ApiError(r.status, r.statusText, r.status === 404 ? "metrics are off on this server (serve --metrics=false)" : await r.text());
      const ms = parseMetrics(await r.text());
      const now = {
        t: Date.now(),
        req: sum(ms, "minimal_http_requests_total"),
        ref: sum(ms, "minimal_refusals_total"),
        dsum: sum(ms, "minimal_http_request_duration_seconds_sum"),
        dcount: sum(ms, "minimal_http_request_duration_seconds_count"),
        acquired: sum(ms, "minimal_db_pool_connections", (l) => l.state === "acquired"),
        max: sum(ms, "minimal_db_pool_max_connections"),
      };
      if (prev) {
        const dt = Math.max((now.t - prev.t) / 1000, 0.001);
        const dc = now.dcount - prev.dcount;
        const vals = {
          requests: Math.max(0, (now.req - prev.req) / dt),
          refusals: Math.max(0, (now.ref - prev.ref) / dt),
          latency: dc > 0 ? ((now.dsum - prev.dsum) / dc) * 1000 : 0,
          pool: now.max > 0 ? (now.acquired / now.max) * 100 : 0,
        };
        for (const [k, v] of Object.entries(vals)) {
          const c = charts[k];
          c.points.push(v);
          if (c.points.length > 60) c.points.shift();
          c.value.textContent = `${fmt(v)}${c.def.unit}`;
          drawChart(c.canvas, c.points, c.def.unit);
        }
      }
      show(note, el("p", { class: "note" }, `Totals: ${now.req} requests, ${now.ref} refusals, ${now.max} pooled connections at most. Every 2 s from /metrics.`));
      prev = now;
    } catch (e) {
      show(note, errorBox(e));
    }
  }
  const timer = setInterval(tick, 2000);
  tick();
  show(page, el("h1", {}, "Metrics"), note, grid);
  return () => { stopped = true; clearInterval(timer); };
}

// ---------------------------------------------------------------- start

// takeCode exchanges a one-time code found in the URL's fragment (a
// console-link URL, opened in a new tab or in this one) and reports whether
// there was one.
function takeCode() {
  const m = /^#code=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!m) return false;
  // The code leaves the address bar (and the history) before it is used.
  history.replaceState(null, "", location.pathname + "#databases");
  exchangeCode(m[1]);
  return true;
}

window.addEventListener("hashchange", () => {
  if (!takeCode()) route();
});
document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("signout").addEventListener("click", () => signOut("Signed out."));
  if (!takeCode()) renderSignIn();
});
