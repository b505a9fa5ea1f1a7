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

// jsdom implements getComputedStyle without pseudo-elements and logs an error for each call
// Ant Design's table makes; ask for the element's own style instead.
const computed = window.getComputedStyle.bind(window);
window.getComputedStyle = (elt: Element) => computed(elt);
