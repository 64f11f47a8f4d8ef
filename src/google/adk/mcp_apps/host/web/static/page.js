// Copyright 2026 Google LLC. Licensed under the Apache License 2.0.
//
// The MCP Apps renderer page: the host side of the protocol through the
// published ext-apps AppBridge (vendor/app-bridge.js, built by `make page`).
// Each View runs in a sandbox proxy on the second loopback origin; the page
// forwards the View's requests to /mcp-apps/api/views/{viewId}/rpc and never
// hands the View its lease. Open with ?app=&user=&session=.
import {AppBridge, PostMessageTransport} from "./vendor/app-bridge.js";

const API = "/mcp-apps/api";
const params = new URLSearchParams(location.search);
const SESSION = {
  appName: params.get("app") || "",
  userId: params.get("user") || "",
  sessionId: params.get("session") || "",
};
const SANDBOX_ORIGIN = document.documentElement.dataset.sandboxOrigin ||
    `${location.protocol}//localhost${location.port ? ":" + location.port : ""}`;
const SANDBOX_URL = `${SANDBOX_ORIGIN}/mcp-apps/sandbox`;
const TEARDOWN_TIMEOUT_MS = Number(params.get("teardownTimeoutMs") || 2000);
const HOST_INFO = {name: "adk-mcp-apps-page", version: "1"};
const HOST_CAPABILITIES = {
  openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
  updateModelContext: {text: {}, structuredContent: {}}, message: {text: {}},
};
const PERMISSIONS = {camera: "camera", microphone: "microphone",
  geolocation: "geolocation", clipboardWrite: "clipboard-write"};
const views = new Map();  // viewId -> mounted view
// The page's record of what happened, read by the browser tests.
const log = [];
window.adkMcpApps = {log, views, teardown: (id) => teardown(views.get(id), false)};

function note(kind, detail) { log.push({kind, ...detail}); }

// Messages from a proxy frame must come from the sandbox origin; anything
// else is dropped before the AppBridge transport sees it.
window.addEventListener("message", (event) => {
  for (const view of views.values()) {
    if (event.source === view.frame.contentWindow && event.origin !== SANDBOX_ORIGIN) {
      event.stopImmediatePropagation();
      note("dropped", {viewId: view.viewId, origin: event.origin});
    }
  }
}, true);

function csrf() {
  const m = /(?:^|;\s*)adk_mcp_apps_csrf=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : "";
}

async function api(path, {method = "GET", body, headers = {}} = {}) {
  const init = {method, credentials: "same-origin", headers: {...headers}};
  if (method !== "GET") init.headers["X-CSRF-Token"] = csrf();
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(API + path, init);
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data.reason || `HTTP ${response.status}`);
    error.reason = data.reason || String(response.status);
    throw error;
  }
  return data;
}

function nonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function viewHeaders(view) {
  return {"X-MCP-Apps-Lease": view.lease, "X-MCP-Apps-Request-Token": nonce()};
}

let rpcId = 0;
async function forward(view, method, params, notification = false) {
  if (!view.initialized) throw new Error("View is not initialized");
  const message = {jsonrpc: "2.0", method, params};
  if (!notification) message.id = ++rpcId;
  note("rpc", {viewId: view.viewId, method, name: params && params.name});
  const reply = await api(`/views/${view.viewId}/rpc`,
      {method: "POST", body: message, headers: viewHeaders(view)});
  note("rpc-reply", {viewId: view.viewId, method, ok: !(reply && reply.error)});
  if (notification || reply === null) return {};
  if (reply.error) throw new Error(reply.error.message || "denied");
  return reply.result;
}

function allowFor(permissions) {
  const p = permissions && typeof permissions === "object" ? permissions : {};
  return Object.keys(PERMISSIONS).filter((k) => p[k]).map((k) => PERMISSIONS[k]).join("; ");
}

function card(widget) {
  const el = document.createElement("section");
  el.className = "widget";
  el.dataset.eventId = widget.eventId;
  el.dataset.functionCallId = widget.functionCallId;
  el.dataset.state = widget.state;
  const header = document.createElement("header");
  header.textContent = `${widget.toolName} (${widget.state})`;
  el.append(header);
  return el;
}

// The host-owned placeholder: rendering it makes no server request. A cold
// widget offers one-click refresh only when the server classified the call
// replay-safe; otherwise "Run <tool> again", warning that effects may repeat.
// The server's "placeholder" offer shows its reason and no action.
function placeholder(el, widget, text) {
  const box = document.createElement("div");
  box.className = "placeholder";
  box.setAttribute("role", "status");
  box.append(text);
  const offer = widget.affordance && widget.affordance.offer;
  if (widget.state === "cold" && offer === "placeholder") {
    const reason = document.createElement("p");
    reason.className = "reason";
    reason.textContent = `It cannot run again (${widget.affordance.reason || "unavailable"}).`;
    box.append(reason);
  } else if (widget.state === "cold") {
    const replaySafe = Boolean(widget.affordance && widget.affordance.replaySafe);
    const button = document.createElement("button");
    button.dataset.action = replaySafe ? "refresh" : "rerun";
    button.textContent = replaySafe ? "Refresh" : `Run ${widget.toolName} again`;
    if (!replaySafe) {
      const warning = document.createElement("p");
      warning.className = "warning";
      warning.textContent = `Running ${widget.toolName} again may repeat its effects.`;
      box.append(warning);
    }
    button.onclick = async () => {
      button.disabled = true;
      try {
        const made = await api("/rerun", {method: "POST", body: {
          ...SESSION, eventId: widget.eventId,
          functionCallId: widget.functionCallId, confirmed: true}});
        note("rerun", {...made, action: button.dataset.action});
        await render({keep: true});
      } catch (error) {
        box.append(` (${error.reason || error.message})`);
      } finally {
        button.disabled = false;
      }
    };
    box.append(button);
  }
  el.append(box);
}

async function notifications(view) {
  const response = await fetch(`${API}/views/${view.viewId}/notifications`, {
    credentials: "same-origin", headers: {"X-MCP-Apps-Lease": view.lease},
    signal: view.abort.signal});
  if (!response.ok || !response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart()).join("\n");
      if (data) deliver(view, JSON.parse(data));
    }
  }
}

function deliver(view, message) {
  note("notification", {viewId: view.viewId, method: message.method});
  if (view.closed) return;
  if (message.method === "ui/notifications/tool-result") {
    if (view.resultSent) return;  // tool-result is terminal
    view.resultSent = true;
    view.bridge.sendToolResult(message.params);
  } else if (message.method === "ui/notifications/tool-cancelled") {
    if (view.resultSent) return;
    view.resultSent = true;
    view.bridge.sendToolCancelled(message.params || {});
  } else if (message.method === "ui/resource-teardown") {
    teardown(view, false);
  }
}

async function teardown(view, requested) {
  if (!view || view.closed) return;
  view.closed = true;
  let acknowledged = false;
  if (view.initialized) {
    const timeout = new Promise((resolve) => setTimeout(resolve, TEARDOWN_TIMEOUT_MS, false));
    acknowledged = await Promise.race([
      view.bridge.teardownResource({}).then(() => true, () => false), timeout]);
  }
  note("teardown", {viewId: view.viewId, acknowledged, requested});
  view.abort.abort();
  try {
    await api(`/views/${view.viewId}/teardown`, {method: "POST",
        body: {acknowledged}, headers: {"X-MCP-Apps-Lease": view.lease}});
    note("closed", {viewId: view.viewId});
  } finally {
    await view.bridge.close().catch(() => {});
    view.frame.remove();
    views.delete(view.viewId);
    placeholder(view.el, {...view.widget, state: "closed", affordance: null},
        "This view was closed.");
  }
}

async function mount(el, widget) {
  let opened;
  try {
    opened = await api("/views", {method: "POST", body: {
      ...SESSION, toolsetId: widget.toolsetId, eventId: widget.eventId,
      functionCallId: widget.functionCallId}});
  } catch (error) {
    note("read-only", {eventId: widget.eventId, reason: error.reason});
    placeholder(el, widget, `Read-only: this view cannot be opened (${error.reason}).`);
    return;
  }
  const {viewId, lease, view: doc} = opened;
  const uiMeta = doc.uiMeta || {};
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  const allow = allowFor(uiMeta.permissions);
  if (allow) frame.setAttribute("allow", allow);
  frame.title = widget.toolName;
  const bridge = new AppBridge(null, HOST_INFO, HOST_CAPABILITIES,
      {hostContext: doc.hostContext || {}});
  const view = {viewId, lease, el, frame, bridge, widget, initialized: false,
    resultSent: false, closed: false, abort: new AbortController()};
  views.set(viewId, view);
  el.dataset.viewId = viewId;
  bridge.onsandboxready = () => {
    note("sandbox-ready", {viewId});
    bridge.sendSandboxResourceReady(
        {html: doc.html, csp: uiMeta.csp, permissions: uiMeta.permissions});
  };
  bridge.oninitialized = () => {
    if (view.initialized) return;
    view.initialized = true;
    note("initialized", {viewId});
    bridge.sendToolInput({arguments: doc.toolInput || {}});
    note("tool-input", {viewId});
    if (doc.toolResult) {
      view.resultSent = true;
      bridge.sendToolResult(doc.toolResult);
      note("tool-result", {viewId});
    }
    notifications(view).catch(() => {});
  };
  bridge.onsizechange = ({height}) => {
    if (typeof height === "number" && height > 0) frame.style.height = `${Math.min(height, 4000)}px`;
    note("size-changed", {viewId, height});
  };
  bridge.onrequestteardown = () => { note("request-teardown", {viewId}); teardown(view, true); };
  bridge.oncalltool = (p) => forward(view, "tools/call", p);
  bridge.onreadresource = (p) => forward(view, "resources/read", p);
  bridge.onlistresources = (p) => forward(view, "resources/list", p);
  bridge.onlistresourcetemplates = (p) => forward(view, "resources/templates/list", p);
  bridge.onmessage = (p) => forward(view, "ui/message", p);
  bridge.onupdatemodelcontext = (p) => forward(view, "ui/update-model-context", p);
  bridge.onopenlink = async ({url}) => {
    note("open-link", {viewId, url});
    return /^https?:\/\//.test(url) && window.open(url, "_blank", "noopener") ? {} : {isError: true};
  };
  bridge.onrequestdisplaymode = async () => ({mode: "inline"});
  bridge.onloggingmessage = (p) => {
    forward(view, "notifications/message", p, true).catch(() => {});
  };
  frame.src = SANDBOX_URL;
  el.append(frame);
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
}

// Renders the Session's widgets. With `keep` (after a refresh or re-run)
// the widgets already shown stay as they are, open Views included (closing
// a widget's last View would make it cold); only new widgets are added.
async function render({keep = false} = {}) {
  const root = document.getElementById("widgets");
  if (!keep) {
    for (const view of views.values()) await teardown(view, false);
    root.replaceChildren();
  }
  const shown = new Set([...root.children].map(
      (el) => `${el.dataset.eventId} ${el.dataset.functionCallId}`));
  const {appName, userId, sessionId} = SESSION;
  const {widgets} = await api(`/sessions/${encodeURIComponent(appName)}/` +
      `${encodeURIComponent(userId)}/${encodeURIComponent(sessionId)}/widgets`);
  for (const widget of widgets) {
    if (shown.has(`${widget.eventId} ${widget.functionCallId}`)) continue;
    const el = card(widget);
    root.append(el);
    if (widget.state === "cold") {
      placeholder(el, widget, "This view's data is no longer live.");
    } else {
      await mount(el, widget);  // live, and legacy payloads replayed
    }
  }
  note("rendered", {count: widgets.length});
}

window.adkMcpApps.render = render;
render().catch((error) => note("error", {message: String(error)}));
