"""Original conversation text for the ``mtr-en`` suite, second set: 10 topics of 10 rounds
each (topics 21-30).

Each round is ``(user turn, reference system reply)``.  Written for duplexeval (Apache-2.0);
not taken from any corpus.  ``scripts/make_mtr_specs.py`` places the MTR features on them.
"""

from __future__ import annotations

TOPICS_B: list[tuple[str, list[tuple[str, str]]]] = [
    ("Learning to swim as an adult", [
        ("I never learned to swim as a child, and now I feel embarrassed.",
         "Plenty of adults are in the same position, so you are far from alone. Many pools run "
         "classes just for adult beginners, where nobody judges anyone."),
        ("What should I look for when choosing one of those adult classes?",
         "Look for small groups and a teacher who stays in the water with you. Classes held in "
         "the shallow end are ideal for building early confidence."),
        ("Honestly, the thing that scares me most is putting my face underwater.",
         "That fear is very common, and it fades with gentle practice. Start by blowing bubbles "
         "at the surface, then slowly lower your face for a few seconds."),
        ("Should I buy goggles, or is it better to learn without them?",
         "Goggles are a good idea for most beginners. Being able to see clearly underwater makes "
         "the whole experience far less stressful and helps you relax."),
        ("My instructor keeps telling me to relax, but I just sink instead.",
         "Tension makes the body stiff and heavy in the water. Try floating on your back with "
         "your ears under and arms wide, and breathe slowly while someone supports you."),
        ("Which stroke is the easiest one for a beginner to learn first?",
         "Most teachers start adults with breaststroke or a simple backstroke. Both let you keep "
         "your head fairly high, so breathing feels more natural at the start."),
        ("How often would I need to go to the pool to improve?",
         "Two or three short sessions a week work better than one long visit. Frequent practice "
         "keeps the new movements fresh, and your confidence grows much faster."),
        ("I get out of breath after only half a length, which is frustrating.",
         "That usually comes from holding your breath rather than breathing out underwater. "
         "Exhale steadily through your nose and mouth, then take a quick breath when your face "
         "lifts."),
        ("Is it realistic to swim a full length by the end of summer?",
         "With regular lessons, that is a very realistic goal for most adults. Just measure "
         "progress in small steps, and celebrate each bit of distance you add."),
        ("Okay, I will sign up for the beginner class at my local pool.",
         "That is a brave and exciting step to take. Bring a towel, some goggles and a bit of "
         "patience, and enjoy the feeling of learning something new."),
    ]),
    ("Starting to meditate", [
        ("A friend suggested meditation for stress, but I have no idea where to start.",
         "Meditation is simpler than it sounds, and it can really help with stress. At its core, "
         "you sit quietly and keep bringing your attention back to your breath."),
        ("How long should each session be when I am just beginning?",
         "Five minutes a day is plenty at the beginning. A short session you actually do every "
         "day is worth far more than a long one you keep skipping."),
        ("Every time I try, my mind wanders off to my shopping list.",
         "That is exactly what minds do, and it is not a failure. Each time you notice it and "
         "gently return to your breath, you are doing the practice."),
        ("Do I have to sit on the floor with my legs crossed?",
         "Not at all, a chair works perfectly well. Sit upright with your feet flat on the "
         "ground, and let your hands rest comfortably in your lap."),
        ("Would a meditation app help me, or is it better without one?",
         "Many beginners find guided recordings very helpful in the first weeks. A calm voice "
         "gives you something to follow, and later you can try sitting in silence."),
        ("What time of day do you think works best for meditating?",
         "Morning works well for many people because the day has not become busy yet. Still, the "
         "best time is simply whenever you can manage it regularly."),
        ("Sometimes I feel sleepy halfway through, and then I nearly doze off.",
         "Sleepiness is common, especially after a long day. Try sitting a little straighter, "
         "keeping your eyes slightly open, or meditating earlier when you feel more awake."),
        ("How will I know whether the meditation is actually doing anything for me?",
         "The changes are often subtle at first. You might notice that you react more calmly in "
         "traffic, or that you fall asleep a little more easily at night."),
        ("My partner thinks it is silly, which makes me feel a bit awkward.",
         "You do not need anyone's approval to look after your mind. You could simply meditate "
         "when you have the room to yourself, and let the results speak."),
        ("Alright, I will try five minutes every morning before breakfast this week.",
         "That is a wonderful way to begin. Keep it light and curious, and after a week, notice "
         "how you feel before deciding whether to go longer."),
    ]),
    ("Decluttering a home", [
        ("My flat is full of clutter, and I feel overwhelmed just looking at it.",
         "That feeling is very common, and the trick is to start small. Pick one drawer or one "
         "shelf today, rather than trying to tackle the whole flat."),
        ("How do I decide what to keep and what to throw away?",
         "Ask yourself whether you have used the item in the past year and whether you would buy "
         "it again. If the answer is no to both, let it go."),
        ("I feel guilty getting rid of presents that people have given me.",
         "Remember that the gift already did its job when it was given. Keeping something you "
         "never use does not honour the person, so thank it quietly and pass it on."),
        ("What should I do with all the things I no longer want?",
         "Sort them into boxes for donating, selling, recycling and rubbish. Charity shops take "
         "most clothes and household items, and anything valuable can be sold online."),
        ("My wardrobe is the worst part, it is completely stuffed with clothes.",
         "Take every item out and only put back what fits and what you actually wear. Turning all "
         "the hangers backwards helps too, since you can later see what stayed untouched."),
        ("How long should a big decluttering project like this take me?",
         "It depends on the size of your home, but many people spread it over a few weeks. "
         "Working for half an hour each evening keeps you from burning out."),
        ("I am worried the mess will simply come back after a few months.",
         "Clutter returns when things have no fixed home. Give every item a clear place, and try "
         "a simple rule where one new thing coming in means one old thing goes out."),
        ("Should I buy lots of storage boxes to keep everything tidy?",
         "Wait until you have finished sorting before buying any storage. Many people buy boxes "
         "first and then just hide clutter neatly, instead of actually reducing it."),
        ("My kids also have mountains of toys scattered all over the house.",
         "Involve them in choosing which toys to give away, so they feel in control. Rotating "
         "toys also works well, keeping some in a cupboard and swapping them every month."),
        ("Right, I will start with the kitchen drawer full of random cables tonight.",
         "That is a perfect first target. Test each cable, label the ones you keep, and enjoy how "
         "satisfying it feels to open a tidy drawer tomorrow."),
    ]),
    ("Keeping backyard chickens", [
        ("We are thinking about keeping a few chickens in our back garden.",
         "Chickens can be lovely, and fresh eggs are a real treat. They do need daily care, "
         "though, so it is worth planning before you bring any home."),
        ("How many chickens should we start with as complete beginners, do you think?",
         "Three or four hens is a good number for a beginner. Chickens are social birds, so never "
         "keep just one, and a small flock is easy to manage."),
        ("What kind of house do the chickens need to sleep in at night?",
         "They need a dry, sheltered coop with a perch and a nesting box. Most importantly, it "
         "must close securely at night to keep foxes out."),
        ("Foxes are definitely around here, so how do we protect the hens?",
         "Use strong welded mesh rather than chicken wire, and bury it a little around the edges "
         "of the run. Shutting the coop door every evening is essential."),
        ("What should we feed them, and can they eat our kitchen scraps?",
         "Their main diet should be a proper layer feed, which gives them the calcium they need. "
         "Vegetable scraps are fine as treats, but avoid anything salty or mouldy."),
        ("How many eggs can we expect each week from a few hens?",
         "A healthy young hen often lays five or six eggs a week in summer. Laying slows down in "
         "winter and as the hens get older, which is perfectly natural."),
        ("Will the chickens be very noisy, because our neighbours are quite close?",
         "Hens are fairly quiet apart from some clucking after laying an egg. Roosters are the "
         "loud ones, so keeping only hens should keep the neighbours happy."),
        ("What happens to the chickens when we go away on holiday?",
         "Ask a neighbour or friend to let them out, feed them and collect the eggs. Offering "
         "them the eggs while you are away is usually a welcome thank you."),
        ("How much time does looking after them take on a normal day?",
         "Only about ten to fifteen minutes a day for feeding, water and eggs. Then plan an hour "
         "or so each week for cleaning out the coop properly."),
        ("Sounds manageable, so we will build a secure coop before buying any hens.",
         "That is exactly the right order to do it in. Once the coop is ready, find a local "
         "breeder, and enjoy your first fresh eggs soon after."),
    ]),
    ("Brewing better coffee at home", [
        ("I spend far too much in coffee shops, so I want to brew at home.",
         "That can save a lot of money, and home coffee can taste just as good. A few simple "
         "tools and fresh beans make most of the difference."),
        ("What is the simplest method to start with for a single person?",
         "A pour over cone or a French press are both easy and cheap. The press is very "
         "forgiving, while the pour over gives a cleaner, lighter cup."),
        ("Does it really matter if I buy whole beans or ground coffee?",
         "It matters quite a lot, because ground coffee loses its aroma within days. Grinding "
         "just before brewing gives a noticeably fresher and sweeter flavour in the cup."),
        ("So which kind of grinder would you recommend for a beginner like me?",
         "A burr grinder is the better choice, because it produces even particles. Blade grinders "
         "chop unevenly, which makes some coffee bitter and some sour in the same cup."),
        ("How much coffee should I use for one mug, roughly speaking?",
         "A common starting point is about one gram of coffee for every sixteen grams of water. "
         "For a large mug, that means roughly fifteen grams of coffee."),
        ("My coffee often tastes bitter, even though I bought expensive beans.",
         "Bitterness usually means the coffee was brewed too strongly or for too long. Try a "
         "slightly coarser grind, a shorter brewing time, or water just off the boil."),
        ("Does the type of water I use actually make a difference?",
         "It can, since coffee is mostly water. If your tap water tastes of chlorine or is very "
         "hard, using filtered water often gives a cleaner and brighter cup."),
        ("How should I store the beans so they stay fresh for longer?",
         "Keep them in an airtight container away from light, heat and moisture. Avoid the "
         "fridge, because the beans absorb smells, and try to use them within a month."),
        ("I also love milky drinks, so can I make a latte without a machine?",
         "You can get close by heating milk and frothing it in a French press or a jar. Pour it "
         "over strong coffee, and you have a simple homemade latte."),
        ("Great, I will get a French press and a small grinder this weekend.",
         "That is a great setup for the price. Experiment with the grind and brewing time for a "
         "week, and you will soon find your favourite cup."),
    ]),
    ("Learning to draw", [
        ("I have always wanted to learn to draw, but I think I have no talent.",
         "Drawing is much more a skill than a talent, and anyone can improve with practice. Most "
         "good artists simply spent many hours drawing badly before drawing well."),
        ("What materials do I need to buy before I start practising?",
         "A few pencils of different hardness, an eraser and a cheap sketchbook are enough. "
         "Expensive materials will not help much until you have learned the basics."),
        ("What should I actually draw first, since I feel a bit lost?",
         "Start with simple objects around your home, like a mug, an apple or a shoe. Looking "
         "closely at real things trains your eye better than copying from photos."),
        ("My drawings always look flat, and I cannot work out why.",
         "Flat drawings usually lack light and shadow. Pick one light source, notice where the "
         "shadows fall on the object, and shade those areas darker to show its shape."),
        ("How much time should I spend drawing each day to see progress?",
         "Even fifteen minutes a day adds up quickly over a few months. Keeping a sketchbook with "
         "you also lets you draw during small pockets of free time."),
        ("Proportions are tricky for me, because everything ends up the wrong size.",
         "Try measuring with your pencil held at arm's length, comparing the height and width of "
         "things. Lightly sketching basic shapes first also helps you place everything "
         "correctly."),
        ("Would it be worth taking a class, or can I learn alone?",
         "You can learn a great deal from books and videos on your own. A class adds useful "
         "feedback, though, and drawing alongside others can be very motivating."),
        ("I get frustrated and want to tear out pages when drawings go wrong.",
         "Keep every page, even the ones you dislike. Looking back at old drawings after a few "
         "months is the best way to see how much you have improved."),
        ("Eventually I would love to draw people, but faces seem really hard.",
         "Faces are challenging, but they follow simple rules. For example, the eyes sit roughly "
         "halfway down the head, which surprises most beginners when they first measure it."),
        ("Thanks, I will buy a sketchbook and draw my coffee mug tonight.",
         "That is a wonderful first subject. Take your time, look more than you draw, and "
         "remember to date the page so you can compare it later."),
    ]),
    ("Volunteering in the community", [
        ("I have some free time on weekends, and I would like to volunteer somewhere.",
         "That is a generous way to use your time. Volunteering helps others, and it is also a "
         "great way to meet people and learn new skills."),
        ("How do I find volunteering opportunities in my local area, do you know?",
         "Many towns have a volunteer centre that matches people with local charities. You can "
         "also search online, or simply ask at libraries, food banks and animal shelters."),
        ("I am not sure what kind of work I would actually enjoy.",
         "Think about what you like doing and who you want to help. If you love being outdoors, "
         "conservation work could suit you, while sociable people often enjoy visiting lonely "
         "neighbours."),
        ("How much time do most places expect a new volunteer to commit?",
         "It varies a lot, from a single afternoon to a few hours every week. Start with "
         "something modest, since it is better to add more later than to drop out."),
        ("I am quite shy, so meeting strangers there makes me a little nervous.",
         "Many volunteers feel that way at first. Tasks like sorting donations or gardening "
         "involve working side by side, which makes it much easier to chat naturally."),
        ("Do I need any special training or checks before I can start helping?",
         "Some roles, especially with children or vulnerable adults, require background checks "
         "and short training. Most organisations arrange this for you, so just ask them what is "
         "needed."),
        ("Could volunteering also help me later when I am applying for jobs?",
         "It certainly can, because it shows commitment and gives you practical experience. "
         "Employers often value volunteering, especially if you can describe what you achieved "
         "there."),
        ("What if I sign up and then realise I do not like it?",
         "That is perfectly fine, and nobody will hold it against you. Just let the organisers "
         "know politely, and then try a different role or another charity."),
        ("A few of my friends might want to join me as well.",
         "Volunteering with friends can be a lot of fun. Some charities welcome groups for single "
         "day projects, such as cleaning up a park or painting a community hall."),
        ("Great, I will contact the food bank near my house tomorrow morning.",
         "That is a wonderful place to start. Food banks usually need help with sorting and "
         "packing, and you will see the difference your time makes right away."),
    ]),
    ("Starting a podcast", [
        ("My friend and I want to start a podcast about old films.",
         "That sounds like a fun project, and old films give you endless material. A clear theme "
         "like yours makes it easier to find listeners who share your interest."),
        ("What equipment do we really need to get started with recording?",
         "Two decent microphones and a pair of headphones are the main essentials. Microphones "
         "that plug straight into a laptop keep the setup simple and affordable."),
        ("Our test recordings sound hollow, probably because we record in the kitchen.",
         "Hard surfaces bounce sound around, which causes that hollow effect. Recording in a room "
         "with curtains, a rug and a sofa, or even a wardrobe, helps a lot."),
        ("How long should each episode be, in your opinion, for new listeners?",
         "There is no fixed rule, but thirty to forty five minutes suits many listeners. More "
         "important is cutting anything dull, so every minute feels worth hearing."),
        ("We tend to ramble a lot, so should we write a script?",
         "A full script can sound stiff, but a short outline works well. List the main points and "
         "a few questions, so you stay on track without sounding rehearsed."),
        ("Which free software could we use to edit the episodes afterwards?",
         "There are several free audio editors that handle cutting, volume levels and noise "
         "removal. Pick one with good tutorials, since learning the basics takes only an "
         "afternoon."),
        ("How do we get our podcast onto the big listening apps?",
         "You upload episodes to a podcast hosting service, which creates a feed for you. Then "
         "you submit that feed once to each app, and new episodes appear automatically."),
        ("Honestly, we are worried that nobody at all will listen to it.",
         "Most podcasts start with a small audience, and that is fine. Share episodes with film "
         "fans online, invite interesting guests, and keep publishing on a regular schedule."),
        ("How often should we release new episodes to keep people interested?",
         "Consistency matters more than frequency. Every two weeks is a realistic pace for two "
         "people with jobs, and listeners appreciate knowing when to expect the next episode."),
        ("Okay, we will record a practice episode this Sunday and see.",
         "A practice episode is a smart way to begin. Listen back together afterwards, note what "
         "worked, and you will feel much more confident for the real launch."),
    ]),
    ("Keeping a journal", [
        ("I keep hearing that writing a journal is good for you, is that true?",
         "Many people find it genuinely helpful. Writing down your thoughts can reduce stress, "
         "help you understand your feelings, and create a lovely record of your life."),
        ("What am I supposed to write about, since my days are fairly ordinary?",
         "Ordinary days are perfectly worth writing about. You might note what happened, how you "
         "felt, and one small thing that surprised you or made you smile."),
        ("Should I use a paper notebook, or would an app on my phone be fine?",
         "Both work, so choose whatever you will actually use. Many people find paper calmer and "
         "more personal, while an app is handy because your phone is always with you."),
        ("How much should I write each time, because I hate long writing sessions?",
         "A few sentences are enough, and nobody is grading it. Some people write just three "
         "lines a day, which takes a couple of minutes and still builds the habit."),
        ("I have started journals before, but I always give up after a week.",
         "Tie the habit to something you already do, like your evening tea or brushing your "
         "teeth. Keeping the notebook in plain sight also reminds you to write."),
        ("What if I miss several days in a row, should I catch up?",
         "There is no need to catch up on missed days. Just start again with today, and perhaps "
         "write one line about the gap if you feel like it."),
        ("I also worry that someone in my family might read it one day.",
         "That is a reasonable concern for many people. You could keep the notebook somewhere "
         "private, or use an app with a password, so you feel free to write honestly."),
        ("Are there prompts I could use when my mind goes completely blank?",
         "Yes, prompts help a lot. Try writing about something you are grateful for, a worry you "
         "want to set down, or what you hope tomorrow will bring."),
        ("Is it worth reading back through old entries every now and then?",
         "It can be very rewarding to do once in a while. You often notice patterns in your "
         "moods, and see how problems that felt huge later worked out fine."),
        ("Alright, I will write three lines tonight in that notebook I never used.",
         "That sounds like a perfect way to start. Keep it simple and honest, and give the habit "
         "a few weeks before you decide how it fits your life."),
    ]),
    ("Learning to knit", [
        ("My grandmother used to knit, and now I would love to learn myself.",
         "What a lovely way to carry on a family tradition. Knitting is relaxing once you get "
         "going, and you only need two basic stitches to make many things."),
        ("What yarn and needles would you suggest for a total beginner?",
         "Choose a smooth, light coloured wool in a medium thickness, with needles to match. "
         "Light colours make it much easier to see each stitch while you are learning."),
        ("Which stitch should I practise first, before trying anything more complicated?",
         "Start with the knit stitch and practise it until it feels automatic. Knitting every row "
         "creates a squishy fabric called garter stitch, which is perfect for beginners."),
        ("My stitches keep getting tighter, and now I can barely move them.",
         "That happens to almost everyone who is concentrating hard. Try relaxing your hands, and "
         "wrap the yarn around the thicker part of the needle rather than its tip."),
        ("What would be a good first project to make, do you think?",
         "A simple scarf or a set of dishcloths is ideal. They are just flat rectangles, so you "
         "can focus on keeping your stitches even without any shaping."),
        ("I dropped a stitch yesterday, and the whole row started to unravel.",
         "Dropped stitches are easy to rescue with a crochet hook. Catch the loose loop and pull "
         "it up through each ladder strand until it reaches the needle again."),
        ("Is it better to learn from videos or from a knitting book?",
         "Videos are especially useful at first, because you can watch the hand movements up "
         "close. A book is handy later, when you want patterns and quick reminders."),
        ("How long will it take me to finish a simple scarf, roughly?",
         "For a beginner knitting half an hour most evenings, a scarf usually takes a few weeks. "
         "You will get noticeably faster as the movements become familiar."),
        ("Are there knitting groups where beginners can go and ask questions?",
         "Many yarn shops and libraries host relaxed knitting circles. Experienced knitters are "
         "usually glad to help, and it is a cosy way to meet new people."),
        ("Lovely, I will buy some blue wool and start a scarf tomorrow.",
         "Blue will make a beautiful first scarf. Cast on loosely, enjoy the rhythm of the "
         "stitches, and be proud of every row, even the wobbly ones."),
    ]),
]
"""(title, rounds): ten (user, system) rounds per topic, in order (topics 21-30)."""
