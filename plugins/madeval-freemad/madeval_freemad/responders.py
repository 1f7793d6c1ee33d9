"""Free-MAD's two debate modes as responders (Free-MAD paper, Sections 4.2 and 4.4, Table 2).

Both build on the Society-of-Minds responder of madeval-madc (one conversation per agent, the
peers' solutions in the paradigm's view order, the double-check prompt when no peer is visible),
because Free-MAD is "implemented on top of SoM".
"""

from __future__ import annotations

from madeval_madc.responder import SocietyOfMinds

from . import prompts


class Conformity(SocietyOfMinds):
    """Free-MAD-c's conformity debate: the Society-of-Minds update prompt of Du et al., unchanged.

    The paper names Du et al.'s prefix prompt as the common, conformity-inducing one and prints no
    other conformity prompt (methods.md 1.3, [INF]).
    """


class AntiConformity(SocietyOfMinds):
    """Free-MAD-n's anti-conformity debate: change your answer only on clear evidence that it is wrong.

    The peers' solutions follow Du et al.'s prefix; the conformity advice sentence is replaced by
    the anti-conformity procedure (peers may be malicious; the majority is no justification). The
    procedure is madeval's reconstruction of Appendix E (see :mod:`madeval_freemad.prompts`).
    """

    advice = prompts.ANTI_CONFORMITY
