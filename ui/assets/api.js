// The page's calls to its server. Every POST carries the CSRF token the
// session endpoint hands out; the session cookie is sent by the browser.

let csrf = '';

export class APIError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

async function call(method, path, body) {
  const init = { method, headers: {}, credentials: 'same-origin' };
  if (method === 'POST') {
    init.headers['Content-Type'] = 'application/json';
    init.headers['X-Memdir-CSRF'] = csrf;
    init.body = JSON.stringify(body || {});
  }
  const resp = await fetch(path, init);
  let data = null;
  try { data = await resp.json(); } catch { data = null; }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

export async function session() {
  const s = await call('GET', '/api/session');
  csrf = s.csrf;
  return s;
}

export const get = (path, params) => {
  const q = params ? '?' + new URLSearchParams(params).toString() : '';
  return call('GET', path + q);
};

export const post = (path, body) => call('POST', path, body);
