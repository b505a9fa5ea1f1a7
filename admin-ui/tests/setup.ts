import '@testing-library/jest-dom/vitest';

// jsdom lacks these; Ant Design's responsive components and ECharts ask for them.
if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addListener: () => {},
      removeListener: () => {},
      addEventListener: () => {},
      removeEventListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList;
}
if (!('ResizeObserver' in window)) {
  (window as unknown as { ResizeObserver: unknown }).ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
}

// jsdom computes a style by matching every rule of every style sheet against the element,
// and Ant Design's CSS-in-JS injects thousands of rules: most of the page tests' time went
// there (Ant Design's table asks on each render, user-event before each click). jsdom lays
// nothing out, so no test here depends on the cascade: an element's computed style is its
// inline style. (This also avoids the pseudo-element calls jsdom logs an error for.)
const computed = window.getComputedStyle.bind(window);
window.getComputedStyle = (elt: Element) => (elt instanceof HTMLElement || elt instanceof SVGElement ? elt.style : computed(elt));
