"""German: the words Folio's rules need (see core/text/lang/__init__.py)."""

from __future__ import annotations

from desktop_app.core.text.lang.lexicon import Lexicon

_MONTHS = (("Januar", "Jänner"), ("Februar",), ("März",), ("April",), ("Mai",), ("Juni",), ("Juli",),
           ("August",), ("September",), ("Oktober", "Okt"), ("November",), ("Dezember", "Dez"))

LEXICON = Lexicon(
    code="de",
    script="latin",
    name="German",
    no_answer="Die Dokumente enthalten die Antwort nicht.",
    no_basis="Die Dokumente bieten keine Grundlage, um diese Frage zu beantworten. Bitte prüfen Sie sie selbst.",
    letters="ÄÖÜäöüß",
    # Words English does not share ("in", "was" are left out): they tell the two apart.
    function_words=frozenset(
        "der die das den dem des ein eine einer eines einem einen und oder nicht ist sind wird werden "
        "wurde wurden kann können muss müssen soll sollen darf welche welcher welches welchen wie wo "
        "wann warum wieso wer wen wem wessen mit von für auf aus bei nach über unter zwischen durch "
        "gegen ohne sich auch noch nur schon wenn dass ob im am zum zur vom beim es sie er wir ihr "
        "gibt heißt heisst bedeutet nennt man hat haben jede jeder jedes alle kein keine dieser diese "
        "dieses bis seit zwei drei vier fünf sechs sieben acht neun zehn".split()
    ),
    # "Was besagt der Fixpunktsatz?": a leading "Was" before a word English does not have
    openers=frozenset({"was"}),
    stopwords=frozenset(
        """der die das und ist von zu den mit sich des auf für im dem nicht ein eine als auch es
        an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen
        so zum war haben nur oder aber vor zur bis mehr durch man""".split()
    ),
    claim_stopwords=frozenset(
        """als auch auf aus bei das dem den der des die ein eine einem einen einer es für im ist
        kann mit nach nicht oder sich sind und von werden wird zu""".split()
    ),
    document_parts=("inhaltsverzeichnis", "inhalt", r"kapitel\w*", r"abschnitt\w*", "stichwortverzeichnis",
                    "register", "verzeichnis", "anhang"),
    see_also=("siehe", r"s\.", r"vgl\."),
    abbreviations=frozenset("bzw vgl usw ggf inkl bspw evtl".split()),
    # "§ 5 Abs. 2", "S. 301"
    numbered_abbreviations=frozenset("s abs kap bd aufl ziff rn tz anm lit hs abschn nrn".split()),
    # "am 28. Oktober", "die 3. Auflage", "im 19. Jahrhundert"
    ordinal_nouns=(*(name for names in _MONTHS for name in names if name not in ("Okt", "Dez")),
                   "Auflage", "Aufl", "Ausgabe", "Jahrhundert", "Jahrhunderts", "Kapitel", "Kapitels",
                   "Abschnitt", "Abschnitts", "Absatz", "Absatzes", "Satz", "Satzes", "Lemma", "Definition",
                   "Übung", "Übungsblatt", "Vorlesung", "Woche", "Stelle", "Mal", "Klasse", "Ordnung",
                   "Grades", "Grad", "Stock", "Platz"),
    months=_MONTHS,
    amount_units=(r"prozent", r"stunden?", r"tage?n?", r"jahre?n?"),
    negations=(r"nicht|kein\w*|nie|niemals|ohne",),
    modals={"must": ("muss", "müssen"), "should": ("soll", "sollte", "sollen"),
            "may": ("kann", "können", "darf", "dürfen")},
    conditions=("wenn", "falls", "sofern"),
    consequences=("dann",),
    scope_words=("nur",),
    capitalises_nouns=True,
    telltale_words=frozenset("der die das und ist nicht wird ein eine".split()),
    follow_up_openers=("und was ist mit", "und wie ist es mit", "was ist mit", "wie ist es mit",
                       "wie steht es mit", "und"),
    # "das", "dies" are references only when no noun follows (every German noun is
    # capitalised); the "es" of "gibt es" is none.
    references=(r"(?<!gibt )es", r"das(?!\s+(?-i:[A-ZÄÖÜ]))", r"dies(?:e[rsmn]?)?(?!\s+(?-i:[A-ZÄÖÜ]))", r"sie", r"er", r"ihn", r"ihm", r"ihre?[rsmn]?",
                r"seine?[rsmn]?", r"dessen", r"deren", r"dafür", r"dazu", r"davon", r"damit", r"darin",
                r"darauf", r"darüber", r"dabei", r"dagegen", r"einer(?=\s*[?.!])",
                r"welche[rs]?(?=\s+(?:hat|haben|ist|sind|gibt)\b)"),
    asks={
        "date": (r"wann", r"bis wann", r"seit wann", r"an welchem (?:tag|datum)", r"in welchem jahr",
                 r"welche[sm]? (?:datum|jahr|tag|monat)", r"zu welchem zeitpunkt"),
        "amount": (r"wie (?:viel|viele|lange|gro(?:ß|ss)|hoch|weit|oft|alt|schnell|breit|tief|schwer)",
                   r"wieviele?", r"welche[rn]? (?:betrag|anzahl|preis|gebühr|anteil|höhe|wert|summe)",
                   r"was kostet", r"was kosten", r"(?:größte|kleinste|höchste|maximale|minimale|höchstens|mindestens)"),
        "name": (r"wer", r"wem", r"wen", r"wessen", r"von wem",
                 r"welche[rsmn]? (?:firma|unternehmen|person|autor|behörde|gericht|partei|land|stadt|bank)"),
        "reason": (r"warum", r"weshalb", r"wieso", r"aus welchem grund"),
        "definition": (r"was (?:ist|sind|bedeutet|bedeuten|versteht man unter|bezeichnet)", r"definiere",
                       r"was heißt"),
        "yesno": (r"^(?:ist|sind|war|waren|hat|haben|hatte|kann|können|darf|dürfen|muss|müssen|soll|sollte|wird|werden|gibt)",),
    },
    gives={
        "reason": (r"weil", r"da", r"denn", r"aufgrund", r"wegen", r"daher", r"deshalb", r"damit", r"grund"),
        "definition": (r"bezeichnet", r"bedeutet", r"versteht man", r"heißt", r"ist eine?", r"sind", r"nennt man"),
    },
)
