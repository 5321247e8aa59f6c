// The Memseek inspector: plain JavaScript over the HTTP API, no build step.
// Every value from the service is shown with textContent (never parsed as HTML): records are
// user data. The key lives in this tab's sessionStorage and is sent only to this origin.
"use strict";

const KEY = "memseek.key";
const $ = (id) => document.getElementById(id);
let views = [];

async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${sessionStorage.getItem(KEY)}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) {
    const err = data.error || {};
    const where = (err.details || []).map((d) => `${d.loc.join(".")}: ${d.msg}`);
    const error = new Error([err.message || response.statusText, ...where].join("\n"));
    error.status = response.status;
    throw error;
  }
  return data;
}

function cell(row, value, className) {
  const td = row.insertCell();
  td.textContent = value === null || value === undefined ? "" : String(value);
  if (className) td.className = className;
  return td;
}

function clear(tableId) {
  const body = $(tableId).tBodies[0];
  body.replaceChildren();
  return body;
}

function show(id, on) { $(id).hidden = !on; }

// --- the key ---------------------------------------------------------------------------------

async function open(key) {
  sessionStorage.setItem(KEY, key);
  try {
    await loadWorkspace();
  } catch (error) {
    sessionStorage.removeItem(KEY);
    $("login-error").textContent = error.status === 401 ? "This key is not valid here." : error.message;
    show("login-error", true);
    return;
  }
  show("login", false);
  show("tabs", true);
  select("workspace");
  await loadViews();
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  open($("key").value.trim());
});

$("forget").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  location.reload();
});

function select(tab) {
  for (const section of document.querySelectorAll("section.tab")) section.hidden = section.id !== tab;
  for (const button of document.querySelectorAll("nav button[data-tab]")) {
    button.classList.toggle("active", button.dataset.tab === tab);
  }
}

for (const button of document.querySelectorAll("nav button[data-tab]")) {
  button.addEventListener("click", () => select(button.dataset.tab));
}

// --- the workspace at a glance -----------------------------------------------------------------

async function loadWorkspace() {
  const data = await api("GET", "/collections");
  const body = clear("collections");
  for (const c of data.collections) {
    const row = body.insertRow();
    cell(row, `${c.name} v${c.version}`);
    cell(row, c.active ? "yes" : "");
    cell(row, c.types.join(", "));
    cell(row, c.modes.join(", "));
    cell(row, Object.entries(c.fields).map(([name, f]) => `${name}:${f.type}${f.sortable ? " (sortable)" : ""}`).join(", "));
    for (const state of ["pending", "ready", "failed", "retracted"]) cell(row, c.records[state], "num");
  }
  const q = data.queue;
  $("queue").textContent = `Processing queue: ${q.depth} waiting, ${q.retrying} being retried` +
    (q.oldest_enqueued_at ? `, oldest queued at ${q.oldest_enqueued_at}` : "");
}

$("refresh").addEventListener("click", () => loadWorkspace().catch(alert));

// --- an entity's records -------------------------------------------------------------------------

const HISTORY_INCLUDE = ["text", "collection", "type", "key", "status", "occurred_at", "created_at"];

function entitySearch(entity, versions) {
  return api("POST", "/search", {
    mode: "recent", k: 100, include: HISTORY_INCLUDE,
    scope: { entities: [entity], versions, status: "all" },
  });
}

$("entity-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const entity = $("entity-name").value.trim();
  const [all, current] = await Promise.all([entitySearch(entity, "all"), entitySearch(entity, "current")]);
  const live = new Set(current.hits.map((hit) => hit.id));
  const body = clear("entity-records");
  for (const hit of all.hits) {
    const row = body.insertRow();
    cell(row, hit.occurred_at);
    cell(row, `${hit.collection}/${hit.type}`);
    cell(row, hit.key);
    cell(row, hit.status);
    cell(row, live.has(hit.id) ? "current" : "superseded");
    cell(row, hit.text);
    const id = cell(row, hit.id);
    id.className = "link";
    id.addEventListener("click", () => { $("record-id").value = hit.id; fetchRecord(); });
  }
});

async function fetchRecord() {
  try {
    const record = await api("GET", `/records/${encodeURIComponent($("record-id").value.trim())}`);
    $("record").textContent = JSON.stringify(record, null, 2);
  } catch (error) {
    $("record").textContent = error.message;
  }
}

$("record-form").addEventListener("submit", (event) => { event.preventDefault(); fetchRecord(); });

// --- views: a form from each view's input_schema -------------------------------------------------

async function loadViews() {
  views = (await api("GET", "/views")).views.filter((view) => view.active);
  const choose = $("view-name");
  choose.replaceChildren(...views.map((view) => new Option(`${view.name} (v${view.version}, ${view.kind})`, view.name)));
  buildForm();
}

function currentView() { return views.find((view) => view.name === $("view-name").value); }

function input(name, schema, required) {
  const type = schema.type;
  if (schema.enum || type === "boolean") {
    const values = schema.enum || [true, false];
    const choice = document.createElement("select");
    if (!required) choice.add(new Option("(default)", ""));
    for (const value of values) choice.add(new Option(String(value), JSON.stringify(value)));
    return choice;
  }
  const field = document.createElement("input");
  field.type = type === "integer" || type === "number" ? "number" : "text";
  if (type === "number") field.step = "any";
  if (schema.format === "date-time") field.placeholder = "2026-07-17T09:00:00Z";
  if (type === "array") field.placeholder = "comma, separated" + (schema.items && schema.items.enum ? ` (${schema.items.enum.join(", ")})` : "");
  if (schema.default !== undefined) field.placeholder = `default: ${JSON.stringify(schema.default)}`;
  field.required = required;
  return field;
}

function buildForm() {
  const view = currentView();
  const fields = $("view-fields");
  fields.replaceChildren();
  if (!view) return;
  $("view-description").textContent = view.description || "";
  const schema = view.input_schema;
  for (const [name, property] of Object.entries(schema.properties || {})) {
    const label = document.createElement("label");
    const title = document.createElement("span");
    title.className = "param";
    title.textContent = name + ((schema.required || []).includes(name) ? " *" : "");
    const field = input(name, property, (schema.required || []).includes(name));
    field.name = name;
    field.dataset.type = property.type;
    label.append(title, field);
    if (property.description) {
      const note = document.createElement("span");
      note.className = "note";
      note.textContent = " " + property.description;
      label.append(note);
    }
    fields.append(label);
  }
}

$("view-name").addEventListener("change", buildForm);

function parameters() {
  const out = {};
  for (const field of $("view-fields").querySelectorAll("input, select")) {
    const raw = field.value.trim();
    if (raw === "") continue;
    const type = field.dataset.type;
    if (field.tagName === "SELECT") out[field.name] = JSON.parse(raw);
    else if (type === "integer" || type === "number") out[field.name] = Number(raw);
    else if (type === "array") out[field.name] = raw.split(",").map((part) => part.trim()).filter(Boolean);
    else out[field.name] = raw;
  }
  return out;
}

function viewError(error) {
  $("view-error").textContent = error ? error.message : "";
  show("view-error", Boolean(error));
}

$("view-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  viewError(null);
  try {
    const result = await api("POST", `/views/${encodeURIComponent($("view-name").value)}/query`, parameters());
    showResult(result);
  } catch (error) {
    viewError(error);
  }
});

$("explain-view").addEventListener("click", async () => {
  viewError(null);
  try {
    const explained = await api("POST", `/views/${encodeURIComponent($("view-name").value)}/explain`, parameters());
    $("sql").textContent = explained.sql;
  } catch (error) {
    viewError(error);
  }
});

function showResult(result) {
  const body = clear("hits");
  for (const hit of result.hits) {
    const row = body.insertRow();
    cell(row, hit.rank, "num");
    cell(row, typeof hit.score === "number" ? hit.score.toFixed(3) : "", "num");
    cell(row, typeof hit.rank_score === "number" ? hit.rank_score.toPrecision(4) : "", "num");
    cell(row, hit.source_ranks ? JSON.stringify(hit.source_ranks) : "");
    cell(row, hit.text || (hit.subject ? `${hit.subject} ${hit.predicate} ${hit.object}` : "") || hit.key || hit.id);
  }
  const paths = (result.paths || []).map((path) => path.nodes.join(" → ")).join("\n");
  $("rendered").textContent = result.rendered || paths || "";
}

// --- start -----------------------------------------------------------------------------------------

if (sessionStorage.getItem(KEY)) open(sessionStorage.getItem(KEY));
