// The destination routes: the stored catalogs and their storage (records.ts).
import { destinationRecord } from "../../state/config-store.ts";
import type { AppOptions } from "../app-options.ts";
import * as S from "../schemas.ts";
import { recordRoutes } from "./records.ts";

export const destinationRoutes = (options: AppOptions) =>
  recordRoutes(options, "destination", "destinations", destinationRecord, S.destinationShown);
