import { useEffect, useState } from 'preact/hooks';

/** Path-based routing inside /console: links push history, the back button pops it. */
export function navigate(path: string): void {
  if (location.pathname + location.search === path) return;
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname + location.search);
  useEffect(() => {
    const update = () => setPath(location.pathname + location.search);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

/** A same-origin link that navigates without a reload (and still works with a new tab). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href')!);
}
