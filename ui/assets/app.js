// memdir ui: a hash-routed single page. Each page fetches what it shows from
// /api/ and builds its DOM with text nodes (see dom.js).

import { h, clear, typeBadge, areaBadge, when, diffView, gauge, breakable } from './dom.js';
import * as api from './api.js';
import { ageChart } from './chart.js';

const main = document.getElementById('main');
const notice = document.getElementById('notice');
let info = {};

// ---------- notices with Undo ----------

// showNotice replaces the notice with the outcome of an action. With run it
// offers to undo that run; with redo, run is itself an undo, so undoing it
// redoes what it undid, and the button says so.
function showNotice(text, { run, redo, error } = {}) {
  clear(notice);
  notice.hidden = false;
  notice.className = 'notice' + (error ? ' error' : '');
  notice.appendChild(h('span', { id: 'notice-text', class: 'grow' }, text));
  if (run) {
    notice.appendChild(h('button', {
      id: redo ? 'redo-button' : 'undo-button', class: 'primary', onclick: () => undo(run, redo),
    }, redo ? 'Redo' : 'Undo'));
  }
  notice.appendChild(h('button', { onclick: () => { notice.hidden = true; } }, 'Dismiss'));
}

function fail(e) {
  showNotice(e.message || String(e), { error: true });
}

// undo undoes a journal run (redo says the run is itself an undo), asking
// first when files changed since, and offers the opposite in the notice:
// Redo after an undo, Undo after a redo.
async function undo(run, redo) {
  let r;
  try {
    r = await api.post('/api/undo', { run });
  } catch (e) {
    if (e.status !== 409 || !confirm(e.message + '\n\nUndo anyway, replacing those later changes (the undo is itself journaled)?')) return fail(e);
    try {
      r = await api.post('/api/undo', { run, force: true });
    } catch (e2) { return fail(e2); }
  }
  showNotice(redo ? `Redone (run ${r.run} undid the undo ${run}).` : `Undone (run ${r.run} undid ${run}).`, { run: r.run, redo: !redo });
  route();
}

// ---------- router ----------

const pages = {
  memories: pageMemories,
  memory: pageMemory,
  index: pageIndex,
  activity: pageActivity,
  recall: pageRecall,
  team: pageTeam,
  checkpoints: pageCheckpoints,
  chart: pageChart,
  review: pageReview,
};

// pageTitles name what a page is loading.
const pageTitles = {
  memories: 'memories', memory: 'the memory', index: 'index health', activity: 'the journal', recall: 'recall preview',
  team: 'team status', checkpoints: 'checkpoints', chart: 'the chart', review: 'the review queue',
};

async function route() {
  const hash = location.hash.replace(/^#\/?/, '') || 'memories';
  const slash = hash.indexOf('/');
  const name = slash < 0 ? hash : hash.slice(0, slash);
  const arg = slash < 0 ? '' : decodeURIComponent(hash.slice(slash + 1));
  const page = pages[name] || pageMemories;
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.page === (name === 'memory' ? 'memories' : name));
  }
  const view = h('div', { id: 'page-' + (pages[name] ? name : 'memories'), 'aria-busy': 'true' });
  // Until the page's data is in, it says so (a list of hundreds of
  // memories can take seconds); the page adds itself below, at once.
  const loading = h('p', { id: 'page-loading', class: 'loading muted', role: 'status' }, 'Loading ' + (pageTitles[name] || 'memories') + '…');
  clear(main).append(view);
  view.append(loading);
  try {
    await page(view, arg);
    view.dataset.ready = 'true';
  } catch (e) {
    view.appendChild(h('p', { class: 'errors', id: 'page-error' }, e.message || String(e)));
    view.dataset.ready = 'error';
  } finally {
    loading.remove();
    view.removeAttribute('aria-busy');
  }
}

// ---------- Memories ----------

async function pageMemories(view) {
  const data = await api.get('/api/memories');
  const typeSel = h('select', { id: 'filter-type', 'aria-label': 'type' },
    h('option', { value: '' }, 'all types'),
    ...info.types.map(t => h('option', { value: t }, t)),
    h('option', { value: '-' }, 'untyped'));
  const areaSel = h('select', { id: 'filter-area', 'aria-label': 'area' },
    h('option', { value: '' }, 'private and team'),
    h('option', { value: 'private' }, 'private'),
    h('option', { value: 'team' }, 'team'));
  const q = h('input', { type: 'search', id: 'search-input', placeholder: 'Search through recall…', class: 'grow' });
  const results = h('div', { id: 'search-results' });
  const tbody = h('tbody');
  const count = h('span', { class: 'muted', id: 'memory-count' });

  const render = () => {
    clear(tbody);
    let n = 0;
    for (const m of data.memories) {
      if (typeSel.value === '-' ? m.type !== '' : typeSel.value && m.type !== typeSel.value) continue;
      if (areaSel.value && (areaSel.value === 'team') !== m.team) continue;
      n++;
      tbody.appendChild(h('tr', { 'data-path': m.path },
        h('td', {}, h('a', { href: '#/memory/' + encodeURIComponent(m.path), class: 'memory-link' }, breakable(m.name || m.path)),
          h('div', { class: 'muted' }, h('code', {}, breakable(m.path)))),
        h('td', {}, typeBadge(m.type)),
        h('td', { class: 'col-area' }, areaBadge(m.team)),
        h('td', { title: when(m.mtime) }, m.age),
        h('td', {}, m.description || h('span', { class: 'warnings' }, 'no description')),
        h('td', {}, indexMark(m))));
    }
    count.textContent = `${n} shown of ${data.memories.length}`;
  };
  typeSel.addEventListener('change', render);
  areaSel.addEventListener('change', render);

  const search = async () => {
    clear(results);
    if (!q.value.trim()) return;
    try {
      const r = await api.get('/api/search', { q: q.value });
      results.appendChild(recallView(r, 'search'));
    } catch (e) { results.appendChild(h('p', { class: 'errors' }, e.message)); }
  };
  q.addEventListener('keydown', e => { if (e.key === 'Enter') search(); });

  view.append(
    h('h1', {}, 'Memories'),
    h('div', { class: 'row card' }, q, h('button', { id: 'search-button', class: 'primary', onclick: search }, 'Search')),
    results,
    h('div', { class: 'row' }, typeSel, areaSel, count, h('span', { class: 'grow' }),
      h('button', { id: 'new-memory', onclick: () => view.appendChild(createForm()) }, 'New memory')),
    data.problems.length ? h('div', { class: 'card warnings' }, h('strong', {}, 'Files that could not be read: '),
      data.problems.map(p => h('div', {}, `${p.path}: ${p.message}`))) : '',
    h('div', { class: 'table-wrap' }, h('table', { id: 'memory-list' },
      h('thead', {}, h('tr', {}, ['Memory', 'Type', 'Area', 'Age', 'Description', 'Index'].map(t => h('th', { class: t === 'Area' ? 'col-area' : null }, t)))),
      tbody)));
  if (!data.memories.length) view.appendChild(h('p', { class: 'muted' }, 'No memories yet in ' + data.dir + '.'));
  render();
}

// indexMark says how MEMORY.md lists a memory: loaded, past the cut Claude
// Code loads, in the overflow file compaction moved its line to, or not at
// all.
function indexMark(m) {
  const file = (m.team ? 'team/' : '') + 'MEMORY.md';
  if (!m.indexed) return h('span', { class: 'warnings', title: 'no ' + file + ' line' }, 'not indexed');
  if (m.index_file) {
    return h('span', {
      class: 'index-cut badge',
      title: `line ${m.index_line} of ${m.index_file}, where compacting ${file} moved it: Claude Code does not load that file, agents reach it through ${file}'s link to it.`,
    }, `in ${m.index_file.replace(/^team\//, '')}`);
  }
  if (!m.index_loaded) {
    return h('span', {
      class: 'index-cut badge cut',
      title: `Claude Code does not load line ${m.index_line} of ${file}: it loads the first ${info.limits.lines} lines and ${info.limits.chars.toLocaleString()} characters, HTML comments left out. Agents find this memory only by searching; compact the index on the Index health page.`,
    }, `line ${m.index_line}: not loaded`);
  }
  return h('span', { class: 'index-mark', title: `line ${m.index_line} of ${file}` }, '✓');
}

function recallView(r, id) {
  const how = {
    model: 'the model chose from a lexical shortlist',
    lexical: 'lexical ranking (no model configured)',
    fallback: 'lexical ranking (the model call failed)',
    skipped: 'nothing looked up',
    'no-memories': 'no memories to look in',
  }[r.method] || r.method;
  const box = h('div', { class: 'card', id: id + '-result' },
    h('div', {}, h('strong', {}, 'Method: '), h('span', { id: id + '-method' }, r.method), ' — ', how,
      ` · ${r.candidates} candidates`, r.usage && r.usage.calls ? ` · model tokens ${r.usage.input_tokens} in, ${r.usage.output_tokens} out` : ''),
    r.reason ? h('div', { class: 'muted' }, r.reason) : '');
  if (!r.memories.length) {
    box.appendChild(h('p', { class: 'muted' }, 'No memory was chosen.'));
    return box;
  }
  // The staleness warning is the same for every old memory but its age:
  // each row gets a mark with its own on hover, the table the text once.
  const stale = r.memories.filter(m => m.freshness);
  box.appendChild(h('table', { class: 'recall-table' },
    h('thead', {}, h('tr', {}, ['Memory', 'Score', 'Why', 'Age'].map(t => h('th', {}, t)))),
    h('tbody', {}, r.memories.map(m => h('tr', { 'data-path': m.path },
      h('td', {}, h('a', { href: '#/memory/' + encodeURIComponent(m.path) }, breakable(m.path))),
      h('td', { class: 'num' }, m.score ? m.score.toFixed(2) : '—'),
      h('td', {}, m.reason),
      h('td', { class: 'nowrap' }, m.age, m.freshness ? [' ', h('span', { class: 'badge stale', title: m.freshness }, 'stale')] : ''))))));
  if (stale.length) {
    box.appendChild(h('p', { class: 'stale-legend muted' }, h('span', { class: 'badge stale' }, 'stale'),
      ` ${stale.length === 1 ? 'This memory is' : `These ${stale.length} memories are`} older than a day, so the agent reads each with a warning (its own age on hover): `,
      h('q', { class: 'warnings' }, stale[0].freshness)));
  }
  return box;
}

function createForm() {
  const old = document.getElementById('create-form');
  if (old) old.remove();
  const name = h('input', { type: 'text', id: 'create-name', required: true });
  const desc = h('input', { type: 'text', id: 'create-description', required: true });
  const type = h('select', { id: 'create-type' }, info.types.map(t => h('option', { value: t }, t)));
  const team = h('input', { type: 'checkbox', id: 'create-team' });
  const body = h('textarea', { id: 'create-body', rows: 8 });
  const form = h('form', { id: 'create-form', class: 'card form' },
    h('h2', {}, 'New memory'),
    h('label', {}, 'Name', name),
    h('label', {}, 'Description (one line: recall decides relevance from it)', desc),
    h('label', {}, 'Type', type),
    h('label', { class: 'row' }, team, 'team memory (shared through team/)'),
    h('label', {}, 'Body (Markdown)', body),
    h('div', { class: 'row' }, h('button', { class: 'primary', type: 'submit' }, 'Create'),
      h('button', { type: 'button', onclick: () => form.remove() }, 'Cancel')));
  form.addEventListener('submit', async e => {
    e.preventDefault();
    try {
      const r = await api.post('/api/memory/create', { name: name.value, description: desc.value, type: type.value, team: team.checked, body: body.value });
      showNotice(`Created ${r.path}.` + (r.index_warning ? ' ' + r.index_warning : ''), { run: r.run });
      location.hash = '#/memory/' + encodeURIComponent(r.path);
    } catch (err) { fail(err); }
  });
  return form;
}

// ---------- a memory ----------

async function pageMemory(view, path) {
  const m = await api.get('/api/memory', { path });
  const body = h('div', { class: 'markdown card', id: 'memory-body' });
  body.innerHTML = m.html; // escaped by the server's Markdown renderer
  const editor = h('div', { id: 'editor-area' });

  const edit = () => {
    clear(editor);
    const ta = h('textarea', { id: 'editor', rows: Math.min(40, m.content.split('\n').length + 4) });
    ta.value = m.content;
    const msgs = h('div', { id: 'editor-messages' });
    editor.appendChild(h('div', { class: 'card' },
      h('h2', {}, 'Edit ', h('code', {}, m.path)),
      h('p', { class: 'muted' }, 'The whole file, frontmatter included. Saving checks it as memdir edit does and refuses if the file changed since it was opened.'),
      ta, msgs,
      h('div', { class: 'row' },
        h('button', {
          id: 'save-button', class: 'primary', onclick: async () => {
            clear(msgs);
            try {
              const r = await api.post('/api/memory/save', { path: m.path, content: ta.value, sha: m.sha });
              showNotice(r.changed ? `Saved ${r.path}.` + (r.warnings.length ? ' Warnings: ' + r.warnings.join('; ') : '') : `${r.path} is unchanged.`, { run: r.run });
              route();
            } catch (e) {
              // The outcome replaces the notice of the save before; the
              // editor lists each check that failed.
              fail(e);
              if (e.body && e.body.errors) msgs.append(...e.body.errors.map(x => h('div', { class: 'errors' }, x)));
            }
          },
        }, 'Save'),
        h('button', { onclick: () => clear(editor) }, 'Cancel'))));
    ta.focus();
  };

  const rename = async () => {
    const to = prompt('New path for ' + m.path + ' (inside the memory directory):', m.path);
    if (!to || to === m.path) return;
    try {
      const r = await api.post('/api/memory/rename', { path: m.path, to });
      showNotice(`Renamed ${r.from} to ${r.to}.`, { run: r.run });
      location.hash = '#/memory/' + encodeURIComponent(r.to);
    } catch (e) { fail(e); }
  };
  const toTeam = async () => {
    try {
      const r = await api.post('/api/memory/move-to-team', { path: m.path });
      showNotice(`Moved ${r.from} to ${r.to}.`, { run: r.run });
      location.hash = '#/memory/' + encodeURIComponent(r.to);
    } catch (e) { fail(e); }
  };
  const del = async () => {
    if (!confirm(`Delete ${m.path} and its MEMORY.md line? The journal keeps it, so Undo brings it back.`)) return;
    try {
      const r = await api.post('/api/memory/delete', { path: m.path });
      showNotice(`Deleted ${r.path}.`, { run: r.run });
      location.hash = '#/memories';
    } catch (e) { fail(e); }
  };

  view.append(
    h('p', {}, h('a', { href: '#/memories' }, '← all memories')),
    h('h1', { id: 'memory-title' }, m.name || m.path),
    h('div', { class: 'row' }, typeBadge(m.type), areaBadge(m.team), h('code', {}, m.path),
      h('span', { class: 'muted' }, 'modified ' + m.age + ' (' + when(m.mtime) + ')'),
      h('span', { class: 'muted', id: 'written-by' }, 'written by ' + (m.written_by || 'unknown (no provenance recorded)'))),
    m.freshness ? h('p', { class: 'warnings', id: 'freshness' }, m.freshness) : h('p', { class: 'muted', id: 'freshness' }, 'Fresh: saved within the last day.'),
    m.errors.length ? h('div', { class: 'card errors' }, m.errors.map(x => h('div', {}, x))) : '',
    m.warnings.length ? h('div', { class: 'card warnings' }, m.warnings.map(x => h('div', {}, x))) : '',
    h('div', { class: 'row' },
      h('button', { id: 'edit-button', class: 'primary', onclick: edit }, 'Edit'),
      h('button', { id: 'rename-button', onclick: rename }, 'Rename'),
      m.team ? '' : h('button', { id: 'team-button', onclick: toTeam }, 'Move to team/'),
      h('button', { id: 'delete-button', class: 'danger', onclick: del }, 'Delete')),
    editor,
    h('p', { class: 'muted' }, m.description),
    body,
    h('div', { class: 'two' },
      h('div', {}, h('h2', {}, 'Frontmatter'), h('pre', { id: 'frontmatter' }, m.frontmatter || '(none)')),
      h('div', {}, h('h2', {}, 'Its line in ', m.index_file),
        m.index_lines.length ? h('pre', { id: 'index-line' }, m.index_lines.join('\n'))
          : h('p', { class: 'warnings', id: 'index-line' }, 'No line: agents find this memory only by searching.'))),
    h('h2', {}, 'History'),
    historyView(m.history));
}

function historyView(history) {
  if (!history.length) return h('p', { class: 'muted', id: 'history' }, 'No journaled change to this file.');
  const byId = new Map(history.map(({ run }) => [run.id, run]));
  return h('ul', { class: 'timeline', id: 'history' }, history.map(({ run, diff }) =>
    h('li', { class: run.undone_by ? 'undone' : '' },
      runHeader(run, byId),
      diff && diff.patch ? h('details', {}, h('summary', {}, `diff: +${diff.added} −${diff.removed}`), diffView(diff.patch))
        : diff && diff.note ? h('div', { class: 'muted' }, diff.note) : '')));
}

// isUndo reports whether run is in effect an undo, following the runs it
// undid through byId: an undo of an undo is a redo.
function isUndo(run, byId) {
  let n = 0;
  for (let r = run; r && r.undoes && n < 64; r = byId.get(r.undoes)) n++;
  return n % 2 === 1;
}

function runHeader(run, byId) {
  const redo = isUndo(run, byId);
  const tokens = run.usage && (run.usage.input_tokens || run.usage.output_tokens)
    ? h('span', { class: 'muted' }, ` · ${run.usage.input_tokens.toLocaleString()} tokens in, ${run.usage.output_tokens.toLocaleString()} out (${run.usage.calls} calls)`) : '';
  return h('div', { class: 'row' },
    h('span', { class: 'badge kind' }, run.kind),
    run.state !== 'done' ? h('span', { class: 'badge ' + run.state }, run.state) : '',
    h('strong', {}, run.summary || run.files.join(', ')),
    h('span', { class: 'muted' }, when(run.start)), tokens,
    run.undone_by ? h('span', { class: 'muted' }, 'undone by ' + run.undone_by) : '',
    run.undoes ? h('span', { class: 'muted' }, 'undoes ' + run.undoes) : '',
    h('span', { class: 'grow' }),
    h('button', {
      class: 'undo-run', 'data-run': run.id, disabled: !!run.undone_by || !run.inside,
      title: run.inside ? null : "changed files outside the memory directory: undo it with 'memdir undo " + run.id + "'",
      onclick: () => undo(run.id, redo),
    }, redo ? 'Redo' : 'Undo'));
}

// ---------- Index health ----------

async function pageIndex(view) {
  const data = await api.get('/api/index');
  view.appendChild(h('h1', {}, 'Index health'));
  for (const ix of data.indexes) {
    if (!ix.exists && ix.file !== 'MEMORY.md') continue;
    const card = h('div', { class: 'card index-card', 'data-file': ix.file }, h('h2', {}, ix.file));
    if (!ix.exists) {
      card.appendChild(h('p', { class: 'muted' }, 'There is no ' + ix.file + ' yet.'));
    } else {
      card.append(
        gauge('Lines', ix.raw_lines, data.limits.lines, ix.line_truncated),
        gauge('Characters', ix.raw_chars, data.limits.chars, ix.char_truncated),
        ix.warning ? h('p', { class: 'warnings' }, ix.warning) : h('p', { class: 'good' }, 'Agents load all of it.'),
        h('details', {}, h('summary', {}, 'What agents load'), h('pre', { class: 'scroll loaded' }, ix.loaded)));
    }
    view.appendChild(card);
  }
  const list = h('tbody');
  for (const f of data.findings) {
    let action = h('span', { class: 'muted' }, 'for a person to decide');
    if (f.fix) {
      const single = f.kind === 'unindexed';
      action = h('button', {
        class: 'fix-button', 'data-kind': f.kind, 'data-path': f.path,
        title: single ? f.fix : f.fix + ' (applies every safe fix doctor knows)',
        onclick: async () => {
          try {
            const r = await api.post('/api/doctor/fix', single ? { kind: f.kind, path: f.path } : { compact: !!f.compact_only });
            showNotice(r.actions.length ? r.actions.join('; ') : 'Nothing to change.', { run: r.run });
            route();
          } catch (e) { fail(e); }
        },
      }, f.compact_only ? 'Compact' : single ? 'Fix' : 'Fix all safe');
    }
    list.appendChild(h('tr', { 'data-kind': f.kind },
      h('td', {}, h('span', { class: 'badge kind' }, f.kind)),
      h('td', {}, h('code', {}, f.path)), h('td', {}, f.message, f.fix ? h('div', { class: 'muted' }, 'fix: ' + f.fix) : ''),
      h('td', {}, action)));
  }
  const fixAll = async compact => {
    try {
      const r = await api.post('/api/doctor/fix', { compact });
      showNotice(r.actions.length ? r.actions.join('; ') : 'Nothing to change.', { run: r.run });
      route();
    } catch (e) { fail(e); }
  };
  view.append(
    h('h2', {}, `Doctor: ${data.findings.length} finding${data.findings.length === 1 ? '' : 's'} in ${data.memories} memories`),
    h('div', { class: 'row' },
      h('button', { id: 'fix-all', onclick: () => fixAll(false) }, 'Apply every safe fix'),
      h('button', { id: 'compact', onclick: () => fixAll(true) }, 'Compact MEMORY.md'),
      h('span', { class: 'muted' }, 'Fixes never delete a memory and are journaled: Undo reverts them.')),
    data.findings.length
      ? h('table', { id: 'findings' }, h('thead', {}, h('tr', {}, ['Kind', 'File', 'Finding', ''].map(t => h('th', {}, t)))), list)
      : h('p', { class: 'good', id: 'findings' }, 'Doctor finds nothing wrong.'));
}

// ---------- Activity ----------

async function pageActivity(view) {
  const data = await api.get('/api/activity');
  view.append(h('h1', {}, 'Activity'),
    h('p', { class: 'muted' }, 'Every run memdir journaled, newest first: ', h('code', {}, data.journal)));
  if (data.problems.length) view.appendChild(h('div', { class: 'card warnings' }, data.problems.map(p => h('div', {}, p))));
  if (!data.runs.length) {
    view.appendChild(h('p', { class: 'muted', id: 'runs' }, 'The journal is empty.'));
    return;
  }
  const byId = new Map(data.runs.map(r => [r.id, r]));
  let inTok = 0, outTok = 0;
  for (const r of data.runs) if (r.usage) { inTok += r.usage.input_tokens; outTok += r.usage.output_tokens; }
  view.appendChild(h('p', {}, `${data.runs.length} runs; model tokens used by extraction and dream runs: ${inTok.toLocaleString()} in, ${outTok.toLocaleString()} out.`));
  view.appendChild(h('ul', { class: 'timeline', id: 'runs' }, data.runs.map(run => {
    const body = h('div');
    const det = h('details', { class: 'run-details', 'data-run': run.id },
      h('summary', {}, `${run.files.length} file${run.files.length === 1 ? '' : 's'}: ${run.files.slice(0, 4).join(', ')}${run.files.length > 4 ? '…' : ''}`), body);
    det.addEventListener('toggle', async () => {
      if (!det.open || body.dataset.loaded) return;
      body.dataset.loaded = '1';
      try {
        const r = await api.get('/api/run', { id: run.id });
        for (const d of r.diffs) {
          body.appendChild(h('div', {}, h('strong', {}, d.path), ` (${d.status}${d.available ? `, +${d.added} −${d.removed}` : ''})`));
          if (d.patch) body.appendChild(diffView(d.patch));
          else if (d.note) body.appendChild(h('p', { class: 'muted' }, d.note));
        }
      } catch (e) { body.appendChild(h('p', { class: 'errors' }, e.message)); }
    });
    return h('li', { class: run.undone_by ? 'undone' : '', 'data-run': run.id }, runHeader(run, byId), run.error ? h('div', { class: 'errors' }, run.error) : '', det);
  })));
}

// ---------- Recall preview ----------

async function pageRecall(view) {
  const ta = h('textarea', { id: 'prompt-input', rows: 3, placeholder: 'A prompt, as you would type it to Claude Code' });
  const tools = h('input', { type: 'text', id: 'tools-input', placeholder: 'recently used tools, comma-separated (optional)' });
  const out = h('div', { id: 'preview-result' });
  const run = async () => {
    clear(out);
    try {
      const r = await api.post('/api/recall/preview', {
        prompt: ta.value, tools: tools.value.split(',').map(t => t.trim()).filter(Boolean),
      });
      out.append(...previewView(r));
    } catch (e) { out.appendChild(h('p', { class: 'errors' }, e.message)); }
  };
  view.append(h('h1', {}, 'Recall preview'),
    h('p', { class: 'muted' }, 'What the UserPromptSubmit hook would add to the conversation for this prompt, in a fresh session. Nothing is recorded.'),
    h('div', { class: 'card form' }, ta, tools, h('div', {}, h('button', { id: 'preview-button', class: 'primary', onclick: run }, 'Preview'))),
    out);
}

function previewView(r) {
  const parts = [recallView(r.result, 'preview')];
  parts.push(h('h2', {}, 'What the hook injects'));
  if (r.injected) {
    parts.push(h('p', { class: 'muted' }, `${r.injected.length.toLocaleString()} of ${r.max_chars.toLocaleString()} characters of additional context.`),
      h('pre', { id: 'injected', class: 'scroll' }, r.injected));
  } else {
    parts.push(h('p', { class: 'muted', id: 'injected' }, 'Nothing: the hook adds no context for this prompt.'));
  }
  const sel = r.selector, cc = r.claude_code;
  parts.push(h('h2', {}, 'Selector manifest and its cost'));
  parts.push(h('div', { class: 'two' },
    h('div', { class: 'card', id: 'selector-manifest' },
      h('h2', {}, 'memdir: the shortlist'),
      sel ? [h('p', {}, `${sel.count} memories · about ${sel.tokens.toLocaleString()} input tokens per selector call`), h('pre', { class: 'scroll' }, sel.manifest)]
        : h('p', { class: 'muted' }, 'No selector call: ' + (r.result.reason || 'nothing to choose from'))),
    h('div', { class: 'card', id: 'claude-manifest' },
      h('h2', {}, 'Claude Code: the 200 newest'),
      cc ? [h('p', {}, `${cc.count} of ${cc.total} memories · about ${cc.tokens.toLocaleString()} input tokens per selector call`), h('pre', { class: 'scroll' }, cc.manifest)]
        : h('p', { class: 'muted' }, 'No memories.'))));
  return parts;
}

// ---------- Team ----------

async function pageTeam(view) {
  const t = await api.get('/api/team');
  view.appendChild(h('h1', {}, 'Team'));
  if (!t.configured) {
    view.appendChild(h('div', { class: 'card', id: 'team-status' }, h('p', {}, 'Team sync is not available: ', t.reason),
      h('p', { class: 'muted' }, "Configure a server for 'memdir sync' (team.url, team.token; see 'memdir config') to see sync status and server history here.")));
  } else if (t.error) {
    view.appendChild(h('div', { class: 'card errors', id: 'team-status' }, `${t.repo} on ${t.server}: `, t.error));
  } else {
    const st = t.status;
    const list = (title, keys, id) => h('div', { class: 'card', id },
      h('h2', {}, `${title} (${keys.length})`), keys.length ? h('ul', {}, keys.map(k => h('li', {}, h('code', {}, k)))) : h('p', { class: 'muted' }, 'none'));
    view.append(h('div', { class: 'card', id: 'team-status' },
      h('dl', { class: 'kv' }, h('dt', {}, 'Repository'), h('dd', {}, st.repo), h('dt', {}, 'Server'), h('dd', {}, t.server),
        h('dt', {}, 'Server version'), h('dd', {}, st.server_empty ? 'empty: nothing pushed yet' : String(st.version)),
        h('dt', {}, 'In sync'), h('dd', {}, String(st.in_sync)))),
    h('div', { class: 'two' },
      list('Ahead: only here (a push uploads them)', st.local_only, 'team-ahead'),
      list('Behind: only on the server (a pull creates them)', st.server_only, 'team-behind')),
    list('Conflicting: different here and on the server', st.modified, 'team-modified'),
    st.skipped.length ? h('div', { class: 'card warnings' }, h('h2', {}, 'Skipped'), st.skipped.map(s => h('div', {}, `${s.key || s.path}: ${s.reason}`))) : '');
  }
  const key = h('input', { type: 'text', id: 'history-key', placeholder: 'a key, e.g. oncall.md', class: 'grow' });
  const out = h('div', { id: 'team-history' });
  const show = async () => {
    clear(out);
    try {
      const r = await api.get('/api/team/history', { key: key.value.trim() });
      if (!r.available) { out.appendChild(h('p', {}, 'Server history is not available: ', r.reason)); return; }
      if (!r.versions.length) { out.appendChild(h('p', { class: 'muted' }, r.reason || `No version on the server changed ${r.key}.`)); return; }
      // The author is a token: its name when the server's token list is at
      // hand, else its id, and the note says where the name is.
      const author = v => v.author_name ? h('span', { title: 'token ' + v.author }, v.author_name)
        : v.author ? h('code', { title: r.authors }, v.author) : '—';
      out.append(h('table', {}, h('thead', {}, h('tr', {}, ['Version', 'When', 'Change', 'Author', 'Entries'].map(x => h('th', {}, x)))),
        h('tbody', {}, r.versions.map(v => h('tr', {}, h('td', { class: 'num' }, v.version), h('td', {}, when(v.last_modified)),
          h('td', {}, (v.deleted || []).includes(r.key) ? 'deleted' : 'written'), h('td', { class: 'author' }, author(v)), h('td', { class: 'num' }, v.entry_count))))),
      r.authors ? h('p', { class: 'muted authors' }, 'Authors: ', r.authors, '.') : '');
    } catch (e) { out.appendChild(h('p', { class: 'errors' }, e.message)); }
  };
  view.append(h('h2', {}, "A key's server history"),
    h('div', { class: 'row card' }, key, h('button', { id: 'history-button', onclick: show }, 'Show history')), out);
}

// ---------- Checkpoints ----------

async function pageCheckpoints(view) {
  const data = await api.get('/api/checkpoints');
  view.append(h('h1', {}, 'Checkpoints'),
    h('p', { class: 'muted' }, 'File-history sessions started in ', h('code', {}, data.project || '?'), ', kept in ', h('code', {}, data.dir || '?'), '.'));
  if (!data.sessions.length) {
    view.appendChild(h('p', { class: 'muted', id: 'sessions' }, 'No checkpoint session for this project.'));
    return;
  }
  const out = h('div', { id: 'checkpoint-result' });
  const show = async (kind, session, message) => {
    clear(out);
    try {
      if (kind === 'diff') {
        const r = await api.get('/api/checkpoints/diff', { session, message });
        out.appendChild(h('h2', {}, `Changes since snapshot ${r.sequence} (${r.message_id}); ${r.unchanged} unchanged`));
        if (!r.files.length) out.appendChild(h('p', { class: 'muted' }, 'Nothing changed since.'));
        for (const f of r.files) {
          out.appendChild(h('div', {}, h('strong', {}, f.path), ` ${f.status} +${f.added} −${f.removed}`));
          if (f.patch) out.appendChild(diffView(f.patch));
        }
      } else {
        const r = await api.get('/api/checkpoints/rewind', { session, message });
        const rep = r.report;
        out.append(h('h2', {}, `Rewind to snapshot ${rep.sequence} (dry run: nothing was changed)`),
          rep.changes.length ? h('table', {}, h('thead', {}, h('tr', {}, ['File', 'Action', 'Lines'].map(x => h('th', {}, x)))),
            h('tbody', {}, rep.changes.map(c => h('tr', {}, h('td', {}, c.path), h('td', {}, c.action), h('td', {}, `+${c.added} −${c.removed}`)))))
            : h('p', { class: 'muted' }, 'A rewind would change nothing.'),
          h('p', { class: 'muted' }, 'To rewind: ', h('code', {}, r.command)));
        if (r.error) out.appendChild(h('p', { class: 'errors' }, r.error));
      }
    } catch (e) { out.appendChild(h('p', { class: 'errors' }, e.message)); }
  };
  view.appendChild(h('div', { id: 'sessions' }, data.sessions.map(s => h('div', { class: 'card session', 'data-session': s.id },
    h('h2', {}, 'Session ', h('code', {}, s.id)), h('div', { class: 'muted' }, s.cwd),
    s.error ? h('p', { class: 'errors' }, s.error) : '',
    h('table', {}, h('thead', {}, h('tr', {}, ['#', 'When', 'Message', 'Files', ''].map(x => h('th', {}, x)))),
      h('tbody', {}, s.snapshots.slice().reverse().map(sn => h('tr', { 'data-message': sn.message_id },
        h('td', { class: 'num' }, sn.sequence), h('td', {}, when(sn.timestamp)), h('td', {}, h('code', {}, sn.message_id)),
        h('td', {}, Object.keys(sn.tracked_file_backups || {}).join(', ')),
        h('td', {}, h('button', { class: 'cp-diff', onclick: () => show('diff', s.id, sn.message_id) }, 'Diff since'), ' ',
          h('button', { class: 'cp-rewind', onclick: () => show('rewind', s.id, sn.message_id) }, 'Rewind dry run'))))))))));
  view.appendChild(out);
}

// ---------- Chart ----------

async function pageChart(view) {
  const data = await api.get('/api/memories');
  const card = h('div', { class: 'card chart', id: 'age-chart' });
  view.append(h('h1', {}, 'Memories by age and type'),
    h('p', { class: 'muted' }, `${data.memories.length} memories, by when each file was last modified.`), card);
  // Drawn at the card's width, and again when that changes (a resized
  // window, a scroll bar that comes or goes).
  let drawn = -1;
  const draw = () => {
    const cs = getComputedStyle(card);
    const width = card.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (width === drawn) return;
    drawn = width;
    clear(card).append(...ageChart(data.memories, width));
  };
  draw();
  const watch = new ResizeObserver(() => (card.isConnected ? draw() : watch.disconnect()));
  watch.observe(card);
}

// ---------- Review queue ----------

async function pageReview(view, arg) {
  const all = arg === 'all';
  const data = await api.get('/api/review', all ? { all: 'true' } : undefined);
  const toggle = h('input', { type: 'checkbox', id: 'review-all', checked: all });
  toggle.addEventListener('change', () => { location.hash = toggle.checked ? '#/review/all' : '#/review'; });
  view.append(h('h1', {}, 'Review queue'),
    h('p', { class: 'muted' }, 'Writes by a program (extraction, dream, a sync pull, an agent’s tool call) that injection screening held back. ',
      'None of it is in memory, and no agent reads it, until you accept it. Kept in ', h('code', {}, data.review_dir), '.'),
    h('div', { class: 'row' }, h('label', {}, toggle, 'show accepted and rejected writes too')));
  if (data.problems.length) view.appendChild(h('div', { class: 'card warnings' }, data.problems.map(p => h('div', {}, p))));
  if (!data.items.length) {
    view.appendChild(h('p', { class: 'muted', id: 'review-items' }, all ? 'No write was ever held for review.' : 'No writes held for review.'));
    return;
  }
  const decide = async (it, accept) => {
    if (accept && !confirm(`Accept the held write to ${it.path}? Its content goes into memory, where agents will read it (Undo reverts it).`)) return;
    try {
      const r = await api.post(accept ? '/api/review/accept' : '/api/review/reject', { id: it.id });
      showNotice(accept ? `Accepted ${it.id}: wrote ${r.item.path}.` : `Rejected ${it.id}: ${r.item.path} was not written; the item is kept.`, { run: r.run });
      route();
    } catch (e) { fail(e); }
  };
  view.appendChild(h('div', { id: 'review-items' }, data.items.map(it => h('div', { class: 'card review-item', 'data-id': it.id, 'data-state': it.state },
    h('h2', {}, h('code', {}, it.path), ' ', h('span', { class: 'badge ' + it.state }, it.state)),
    h('dl', { class: 'kv' },
      h('dt', {}, 'Held'), h('dd', {}, when(it.queued), ' · ', h('code', {}, it.id)),
      h('dt', {}, 'Written by'), h('dd', { class: 'review-by' }, it.by),
      h('dt', {}, 'Would'), h('dd', {}, (it.existed ? 'replace ' : 'create ') + it.path + (it.op === 'save' ? ' (a memory save, with its MEMORY.md line)' : ' (the whole file, as written)')),
      it.decided ? [h('dt', {}, 'Decided'), h('dd', {}, when(it.decided), it.run_id ? [' · run ', h('code', {}, it.run_id)] : '')] : '',
      it.undone_by ? [h('dt', {}, 'Accepted before'), h('dd', { class: 'review-undone warnings' }, 'in run ', h('code', {}, it.run_id),
        ', then undone by run ', h('code', {}, it.undone_by), ': the write is out of memory again; accept or reject it anew.')] : ''),
    h('table', { class: 'review-findings' },
      h('thead', {}, h('tr', {}, ['Rule', 'Line', 'What matched'].map(t => h('th', {}, t)))),
      h('tbody', {}, it.findings.map(f => h('tr', {},
        h('td', { title: f.about }, h('span', { class: 'badge kind' }, f.rule)),
        h('td', { class: 'num' }, f.line),
        h('td', {}, h('code', {}, f.excerpt), h('div', { class: 'muted' }, f.about)))))),
    h('details', { open: it.state === 'pending' }, h('summary', {}, 'Held content (hidden characters shown as <U+XXXX>)'),
      h('pre', { class: 'held-content scroll' }, it.visible)),
    // Screening flagged the write: keeping it out is the safe choice, so
    // that is the primary button; accepting it looks like a caution.
    it.state === 'pending' ? h('div', { class: 'row' },
      h('button', { class: 'review-reject primary', onclick: () => decide(it, false) }, 'Reject: keep it out'),
      h('button', { class: 'review-accept caution', onclick: () => decide(it, true) }, 'Accept: write it')) : ''))));
}

// ---------- start ----------

// A blocked resource is a bug in the page: say so where tests and people
// look.
document.addEventListener('securitypolicyviolation', e => {
  console.error(`Content-Security-Policy blocked ${e.blockedURI || 'inline content'} (${e.violatedDirective})`);
});

async function start() {
  info = await api.session();
  document.getElementById('dir').textContent = info.dir;
  document.getElementById('footer').textContent = `memdir ${info.version || ''} · ${info.dir}` +
    (info.model ? ' · recall with a model' : ' · lexical recall') + (info.enabled === false ? ' · auto memory is disabled: ' + info.enabled_reason : '');
  window.addEventListener('hashchange', route);
  await route();
}

start().catch(e => {
  clear(main).appendChild(h('p', { class: 'errors', id: 'page-error' }, 'memdir ui could not start: ' + (e.message || e)));
});
