/*
 * chemgauge OPSIN line server: reads one chemical name per line on stdin and
 * writes exactly one result line per input line on stdout, flushed.
 *
 * Why not OPSIN's own CLI: the CLI prints failure messages and warnings on
 * stderr, so they cannot be tied to a name once names are pipelined; it cuts
 * a name at its first tab; and an Error thrown while parsing ends the process.
 *
 * Protocol (UTF-8, fields separated by tabs, free text escaped so it never
 * holds a tab, CR or newline: backslash -> \\, tab -> \t, LF -> \n, CR -> \r):
 *   start-up: "#chemgauge-opsin-server" TAB protocol TAB opsin-version
 *   per name: seq TAB status TAB smiles TAB message TAB name [TAB warning]...
 * seq counts input lines from 1; status is SUCCESS, WARNING, FAILURE or
 * EXCEPTION; name echoes the line as read so the caller can check alignment.
 *
 * Arguments: any of --allow-radicals, --allow-uninterpretable-stereo,
 * --detailed-failure-analysis, --wildcard-radicals, --acids-without-acid.
 */

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import uk.ac.cam.ch.wwmm.opsin.NameToStructure;
import uk.ac.cam.ch.wwmm.opsin.NameToStructureConfig;
import uk.ac.cam.ch.wwmm.opsin.OpsinResult;
import uk.ac.cam.ch.wwmm.opsin.OpsinWarning;

public final class OpsinLineServer {
    static final String PROTOCOL = "1";

    private OpsinLineServer() {}

    static String escape(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(text.length() + 8);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\\': out.append("\\\\"); break;
                case '\t': out.append("\\t"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                default: out.append(c);
            }
        }
        return out.toString();
    }

    static NameToStructureConfig configFrom(String[] args) {
        NameToStructureConfig config = new NameToStructureConfig();
        for (String arg : args) {
            switch (arg) {
                case "--allow-radicals": config.setAllowRadicals(true); break;
                case "--allow-uninterpretable-stereo":
                    config.setWarnRatherThanFailOnUninterpretableStereochemistry(true); break;
                case "--detailed-failure-analysis": config.setDetailedFailureAnalysis(true); break;
                case "--wildcard-radicals": config.setOutputRadicalsAsWildCardAtoms(true); break;
                case "--acids-without-acid": config.setInterpretAcidsWithoutTheWordAcid(true); break;
                default:
                    System.err.println("OpsinLineServer: unknown argument " + arg);
                    System.exit(2);
            }
        }
        return config;
    }

    public static void main(String[] args) throws IOException {
        NameToStructureConfig config = configFrom(args);
        NameToStructure opsin = NameToStructure.getInstance();
        BufferedReader in = new BufferedReader(
            new InputStreamReader(new FileInputStream(FileDescriptor.in), StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(
            new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8));
        out.write("#chemgauge-opsin-server\t" + PROTOCOL + "\t" + escape(NameToStructure.getVersion()));
        out.write('\n');
        out.flush();
        long seq = 0;
        String name;
        while ((name = in.readLine()) != null) {
            seq++;
            StringBuilder line = new StringBuilder(128);
            line.append(seq).append('\t');
            try {
                OpsinResult result = opsin.parseChemicalName(name, config);
                String smiles = result.getStatus() == OpsinResult.OPSIN_RESULT_STATUS.FAILURE
                    ? null : result.getSmiles();
                line.append(result.getStatus().name()).append('\t')
                    .append(escape(smiles)).append('\t')
                    .append(escape(result.getMessage())).append('\t')
                    .append(escape(name));
                for (OpsinWarning warning : result.getWarnings()) {
                    line.append('\t').append(escape(warning.getType() + ": " + warning.getMessage()));
                }
            } catch (Throwable error) {
                // An Error (e.g. StackOverflowError) on one name must not end the server.
                line.setLength(0);
                line.append(seq).append("\tEXCEPTION\t\t")
                    .append(escape(error.getClass().getName() + ": " + error.getMessage()))
                    .append('\t').append(escape(name));
            }
            out.write(line.toString());
            out.write('\n');
            out.flush();
        }
    }
}
