// The floe UI: a hash router over the pages, and the login when the server asks for one.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, call, loadSession, login, type Session } from "./api";
import { DestinationsPage } from "./pages/destinations";
import { HistoryPage, RunPage } from "./pages/history";
import { JobEditor } from "./pages/job-editor";
import { JobsPage } from "./pages/jobs";
import { LogPage } from "./pages/logs";
import { PlotsPage } from "./pages/plots";
import { SourcesPage } from "./pages/sources";
import { TablesPage } from "./pages/tables";
import "./style.css";
import { ErrorBox, fmtTime, Toasts, useData } from "./components/ui";

function useHash() {
  const [hash, setHash] = useState(window.location.hash || "#/jobs");
  useEffect(() => {
    const on = () => setHash(window.location.hash || "#/jobs");
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function Page({ hash }: { hash: string }) {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const [section, a, b] = parts;
  if (section === "sources") return <SourcesPage />;
  if (section === "destinations") return <DestinationsPage />;
  // Keyed by job: another job (or New job) is a fresh editor, never the last one's state.
  if (section === "jobs" && a === "new" && !b) return <JobEditor key="new" />;
  if (section === "jobs" && a && b === "edit") return <JobEditor key={a} name={a} />;
  if (section === "jobs" && a && b === "history") return <HistoryPage job={a} />;
  if (section === "jobs" && a && b === "tables") return <TablesPage job={a} />;
  if (section === "jobs" && a && b === "plots") return <PlotsPage job={a} />;
  if (section === "runs" && a && b === "log") return <LogPage id={a} />;
  if (section === "runs" && a && !b) return <RunPage id={a} />;
  if (section === "audit" && !a) return <AuditPage />;
  if ((section === "jobs" || section === "") && !a) return <JobsPage />;
  return <NotFound hash={hash} />;
}

function NotFound({ hash }: { hash: string }) {
  return (
    <section data-testid="not-found">
      <h1>Not found</h1>
      <p>
        There is no page at <code>{hash}</code>. Go to the <a href="#/jobs">jobs</a>.
      </p>
    </section>
  );
}

/** Every change to a source, destination or job: who, when, what. */
function AuditPage() {
  const audit = useData(() => call(api.audit.$get()), []);
  return (
    <section>
      <h1>Audit log</h1>
      <p class="muted">Every change to a source, destination or job, newest first (UTC).</p>
      <ErrorBox error={audit.error} />
      <div class="scroll">
        <table class="grid" data-testid="audit-table">
          <thead>
            <tr>
              <th>At</th>
              <th>Who</th>
              <th>Change</th>
            </tr>
          </thead>
          <tbody>
            {(audit.data ?? []).map((e, i) => (
              <tr key={`${e.at}-${i}`}>
                <td>{fmtTime(e.at)}</td>
                <td>{e.actor}</td>
                <td>
                  {e.action} {e.kind} <strong>{e.name}</strong>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Login({ onDone }: { onDone: () => void }) {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  return (
    <form
      class="card login"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          await login(password);
          onDone();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h1>floe</h1>
      <input
        type="password"
        name="password"
        placeholder="password"
        autocomplete="current-password"
        value={password}
        onInput={(e) => setPassword(e.currentTarget.value)}
      />
      <button type="submit" class="primary">
        Log in
      </button>
      <ErrorBox error={error} />
    </form>
  );
}

function App() {
  const hash = useHash();
  const [session, setSession] = useState<Session | null>(null);
  const refresh = () => loadSession().then(setSession);
  useEffect(() => {
    refresh();
  }, []);
  if (!session) return null;
  if (session.authRequired && !session.authenticated) return <Login onDone={refresh} />;
  const current = hash.split("/")[1] ?? "jobs";
  const link = (to: string, label: string) => (
    <a href={`#/${to}`} class={current === to || (to === "jobs" && current === "runs") ? "active" : ""}>
      {label}
    </a>
  );
  return (
    <>
      <header>
        <a class="brand" href="#/jobs">
          floe
        </a>
        <nav>
          {link("jobs", "Jobs")}
          {link("sources", "Sources")}
          {link("destinations", "Destinations")}
          {link("audit", "Audit log")}
        </nav>
        {session.authRequired ? (
          <button type="button" onClick={() => call(api.logout.$post()).then(refresh)}>
            Log out
          </button>
        ) : null}
      </header>
      <main>
        <Page hash={hash} />
      </main>
      <Toasts />
    </>
  );
}

render(<App />, document.getElementById("app")!);
