// The job file's choices the forms offer (target engines and what each reads, value and key
// formats), as the server has them (GET /api/choices, from src/job): the UI keeps no list of its own.
import { useEffect, useState } from "preact/hooks";
import { api, type Choices, call } from "../api";

let loaded: Promise<Choices> | undefined;

export function useChoices(): Choices | undefined {
  const [choices, setChoices] = useState<Choices | undefined>(undefined);
  useEffect(() => {
    loaded ??= call(api.choices.$get());
    loaded.then(setChoices, () => {
      loaded = undefined;
    });
  }, []);
  return choices;
}

/** A checkbox per target engine, its note as the title. */
export function EngineChecks(props: { selected: string[]; onChange: (engines: string[]) => void }) {
  const choices = useChoices();
  return (
    <>
      {(choices?.targetEngines ?? []).map(({ engine, note }) => (
        <label class="check" key={engine} title={note}>
          <input
            type="checkbox"
            name={`engine-${engine}`}
            checked={props.selected.includes(engine)}
            onChange={(e) =>
              props.onChange(
                e.currentTarget.checked ? [...props.selected, engine] : props.selected.filter((x) => x !== engine),
              )
            }
          />{" "}
          {engine}
        </label>
      ))}
    </>
  );
}
