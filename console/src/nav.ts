/** Path routing under /console/ (the gateway answers index.html for every page path). */
export const BASE = '/console/';

export function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return p.replace(/\/+$/, '');
}

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  dispatchEvent(new PopStateEvent('popstate'));
}
