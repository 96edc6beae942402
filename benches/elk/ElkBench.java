// The ELK side of `cargo bench --bench elk` (see benches/elk.rs): loads an OFN file with
// the OWL API, classifies it with ELK 0.6, and writes the taxonomy in the bench's form,
// one line per named class: `name<TAB>direct parents<TAB>equivalents` (names are the
// IRIs' local parts, sorted, space-separated), or `name<TAB>!` for an unsatisfiable
// class. Prints `load_ms classify_ms peak_kib` on stdout. A benchmark tool only: never
// part of Cairn, and CI does not build it.
import java.io.File;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.semanticweb.elk.owlapi.ElkReasonerFactory;
import org.semanticweb.owlapi.apibinding.OWLManager;
import org.semanticweb.owlapi.model.OWLClass;
import org.semanticweb.owlapi.model.OWLOntology;
import org.semanticweb.owlapi.model.OWLOntologyManager;
import org.semanticweb.owlapi.reasoner.InferenceType;
import org.semanticweb.owlapi.reasoner.Node;
import org.semanticweb.owlapi.reasoner.OWLReasoner;

public class ElkBench {
    static String local(OWLClass c) {
        String s = c.getIRI().toString();
        int i = Math.max(s.lastIndexOf('#'), Math.max(s.lastIndexOf('/'), s.lastIndexOf(':')));
        return s.substring(i + 1);
    }

    static String names(Iterable<OWLClass> cs, OWLClass except) {
        List<String> v = new ArrayList<>();
        for (OWLClass c : cs) {
            if (!c.equals(except)) v.add(local(c));
        }
        v.sort(null);
        return String.join(" ", v);
    }

    static long peakKib() throws Exception {
        for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (l.startsWith("VmHWM:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
        return -1;
    }

    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        OWLOntologyManager m = OWLManager.createOWLOntologyManager();
        OWLOntology o = m.loadOntologyFromOntologyDocument(new File(args[0]));
        long t1 = System.nanoTime();
        OWLReasoner r = new ElkReasonerFactory().createReasoner(o);
        r.precomputeInferences(InferenceType.CLASS_HIERARCHY);
        long t2 = System.nanoTime();
        try (PrintWriter w = new PrintWriter(args[1], "UTF-8")) {
            for (OWLClass c : o.getClassesInSignature()) {
                Node<OWLClass> eq = r.getEquivalentClasses(c);
                if (eq.isBottomNode()) {
                    w.println(local(c) + "\t!");
                    continue;
                }
                w.println(local(c) + "\t" + names(r.getSuperClasses(c, true).getFlattened(), null)
                        + "\t" + names(eq.getEntities(), c));
            }
        }
        r.dispose();
        System.out.println((t1 - t0) / 1000000 + " " + (t2 - t1) / 1000000 + " " + peakKib());
    }
}
