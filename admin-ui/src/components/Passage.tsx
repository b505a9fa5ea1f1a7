import type { Segment } from '../lib/highlight';

/** Text with the copied parts marked (`<mark class="copied">`). */
export function MarkedText({ segments, testId, contextDim = false }: { segments: Segment[]; testId?: string; contextDim?: boolean }) {
  return (
    <div className="passage-text" data-testid={testId}>
      {segments.map((s, i) =>
        s.marked ? (
          <mark key={i} className="copied">{s.text}</mark>
        ) : (
          <span key={i} className={contextDim ? 'passage-context' : undefined}>{s.text}</span>
        ),
      )}
    </div>
  );
}
