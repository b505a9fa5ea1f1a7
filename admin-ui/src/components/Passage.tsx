import type { Segment } from '../lib/highlight';
import { splitMarkup } from '../lib/highlight';

function Quoted({ text }: { text: string }) {
  return (
    <>
      {splitMarkup(text).map((tok, i) =>
        tok.markup ? (
          <span key={i} className="markup">{tok.text}</span>
        ) : (
          <span key={i}>{tok.text}</span>
        ),
      )}
    </>
  );
}

/** Text with the copied parts marked (`<mark class="copied">`); HTML tags in quotes are dimmed. */
export function MarkedText({ segments, testId, contextDim = false }: { segments: Segment[]; testId?: string; contextDim?: boolean }) {
  return (
    <div className="passage-text" data-testid={testId}>
      {segments.map((s, i) =>
        s.marked ? (
          <mark key={i} className="copied"><Quoted text={s.text} /></mark>
        ) : (
          <span key={i} className={contextDim ? 'passage-context' : undefined}><Quoted text={s.text} /></span>
        ),
      )}
    </div>
  );
}
