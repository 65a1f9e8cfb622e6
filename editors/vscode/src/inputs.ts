// "Which inputs give this?": the adapter's `inverseCall` request (README, "The inverse
// call"), shown as a quick pick. Kept free of the `vscode` module so it can be tested.

/** One candidate as the adapter sends it. */
export interface Candidate {
  function: string;
  line: number;
  arguments: { name: string; value: string }[];
  call: string | null;
  probability: number | null;
  reproduces: boolean | null;
  note: string | null;
}

/** A quick-pick row: the call, how likely, and what Python said of it. */
export interface Row {
  label: string;
  description: string;
  detail: string;
  call: string | null;
}

export function probabilityText(p: number): string {
  return p >= 0.01 || p === 0 ? p.toFixed(2) : p.toExponential(1);
}

export function rows(candidates: Candidate[]): Row[] {
  return candidates.map((c) => {
    const written = c.arguments.map((a) => `${a.name}=${a.value}`).join(', ');
    return {
      label: c.call ?? `${c.function}(${written})`,
      description: c.probability === null ? 'exact' : `p=${probabilityText(c.probability)}`,
      detail: c.reproduces === true ? '$(check) reproduces this state under Python' : c.note ?? '',
      call: c.call,
    };
  });
}
