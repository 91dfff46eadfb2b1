import { useEffect, useState } from 'preact/hooks';

/** Hash routes (`#/org/acme/usage`): no server fallback needed, and any path prefix works. */
export interface Route {
  page: string;
  org?: string;
  rest: string[];
}

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'org' && parts[1] !== undefined) {
    return { page: parts[2] ?? 'assistants', org: parts[1], rest: parts.slice(3) };
  }
  return { page: parts[0] ?? 'home', rest: parts.slice(1) };
}

export function href(...parts: string[]): string {
  return '#/' + parts.map(encodeURIComponent).join('/');
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
