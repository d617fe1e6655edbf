// A credential of two fields, a name and its write-only secret (an OAuth2 client id and secret,
// a registry username and password): the secret's hint says whether leaving it empty keeps the
// stored one.
import { secretHint } from "./record-page";
import { TextField } from "./ui";

type TextKey<F> = { [K in keyof F]: F[K] extends string ? K : never }[keyof F] & string;

/** A field as [label, input name, the form's key]. */
type Part<F> = [label: string, name: string, key: TextKey<F>];

export function CredentialFields<F>(props: {
  form: F;
  set: (patch: Partial<F>) => void;
  editing: string | null;
  id: Part<F>;
  secret: Part<F>;
}) {
  const field = ([label, name, key]: Part<F>) => ({
    label,
    name,
    value: props.form[key] as string,
    onValue: (v: string) => props.set({ [key]: v } as Partial<F>),
  });
  return (
    <>
      <TextField {...field(props.id)} />
      <TextField {...field(props.secret)} hint={secretHint(props.editing)} secret />
    </>
  );
}
