// Small DOM helpers. Text is always inserted as text nodes, never parsed as
// HTML; the only HTML the page inserts is the server's escaped Markdown.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';

export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

// breakable returns text (a path, a name) with a break opportunity after
// each _ / - and ., so a long file name wraps between its words.
export function breakable(text) {
  return String(text).split(/(?<=[_/.-])/).flatMap((part, i) => i ? [h('wbr'), part] : [part]);
}

export function typeBadge(type) {
  return h('span', { class: 'badge ' + (type || 'none') }, type || 'untyped');
}

export function areaBadge(team) {
  return h('span', { class: 'badge area' }, team ? 'team' : 'private');
}

export function when(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// diffView shows a unified diff with added, removed and hunk lines marked.
export function diffView(patch) {
  const pre = h('pre', { class: 'diff' });
  for (const line of patch.replace(/\n$/, '').split('\n')) {
    let cls = '';
    if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+') && !line.startsWith('+++')) cls = 'add';
    else if (line.startsWith('-') && !line.startsWith('---')) cls = 'del';
    pre.appendChild(h('span', { class: cls }, line || ' '));
  }
  return pre;
}

export function gauge(label, value, limit, over) {
  const frac = Math.min(value / limit, 1);
  const width = 500;
  return h('div', { class: 'gauge' },
    h('div', {}, `${label}: ${value.toLocaleString()} of ${limit.toLocaleString()}`,
      over ? h('strong', { class: 'bad' }, ' — over the limit, agents do not see all of it') : ''),
    s('svg', { viewBox: `0 0 ${width} 18`, role: 'img', 'aria-label': `${label} ${value} of ${limit}` },
      s('rect', { class: 'track', x: 0, y: 0, width, height: 18, rx: 4 }),
      s('rect', { class: 'fill' + (over ? ' over' : ''), x: 0, y: 0, width: Math.max(frac * width, 1), height: 18, rx: 4 })));
}
